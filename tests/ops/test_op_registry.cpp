// One op, one place: the host's registry (frugal/model/ops.h) defines every op
// once; each executor registers kernels for some of them. These checks read the
// registries themselves, so a kernel registered under a name the host does not
// know, an op one executor runs and the other does not, or an op without a
// folder class fails here rather than in a user's model.
#include <algorithm>
#include <catch2/catch.hpp>
#include <set>

#include "folder/affine_ops.h"
#include "frugal/model/ops.h"
#include "kernels/kernel.h"
#ifdef FRUGAL_TEST_VULKAN_ENGINE
#include "vk_kernel.h"
#endif

using namespace frugal;

namespace {

std::set<std::string> as_set(const std::vector<std::string>& v) { return {v.begin(), v.end()}; }

// A node of `op` with one input per slot the op reads, for the folder's classifier.
Node node_of(const std::string& op) {
  Node n;
  n.name = "n";
  n.op_type = op;
  n.inputs = {"x"};
  n.outputs = {"y"};
  return n;
}

}  // namespace

TEST_CASE("every op the host knows is defined once, with a folder class", "[ops]") {
  const std::vector<OpInfo>& ops = all_ops();
  REQUIRE(ops.size() >= 40);
  std::set<std::string> names;
  for (const OpInfo& op : ops) {
    INFO(op.op_type);
    CHECK(names.insert(op.op_type).second);  // listed once
    CHECK(op.make != nullptr);
    CHECK(std::string(op.fold_rule).size() > 0);
    CHECK(op_info(op.op_type) == &op);
  }
  CHECK(known_ops() == std::vector<std::string>(names.begin(), names.end()));
}

TEST_CASE("the folder classifies every op the host knows from the registry", "[ops][folder]") {
  Graph g;
  for (const OpInfo& op : all_ops()) {
    INFO(op.op_type);
    const folding::OpInteraction i = folding::classify(g, node_of(op.op_type), {});
    CHECK_THAT(i.why, !Catch::Contains("not in the op registry"));
    if (op.fold == FoldClass::NonAffine) CHECK(i.kind == FoldClass::NonAffine);
  }
  CHECK_THAT(folding::classify(g, node_of("NoSuchOp"), {}).why, Catch::Contains("not in the op registry"));
}

TEST_CASE("the cpu executor runs only ops the host defines, every activation included", "[ops][cpu]") {
  const std::vector<std::string> cpu_ops = cpu::kernels().ops();
  for (const std::string& op : cpu_ops) {
    INFO(op);
    CHECK(op_is_known(op));
  }
  for (const OpInfo& op : all_ops())
    if (op.activation) CHECK(cpu::kernels().supports(op.op_type));
  for (const char* op : {"Conv", "Gemm", "MatMul", "Add", "Sub", "Mul", "Div", "GlobalMaxPool", "Softmax"})
    CHECK(cpu::kernels().supports(op));
  CHECK_FALSE(cpu::kernels().supports("NoSuchOp"));
}

#ifdef FRUGAL_TEST_VULKAN_ENGINE
TEST_CASE("the cpu and vulkan executors run the same ops", "[ops][vulkan]") {
  const std::set<std::string> cpu_ops = as_set(cpu::kernels().ops()), vk_ops = as_set(vk::kernels().ops());
  std::vector<std::string> only_cpu, only_vk;
  std::set_difference(cpu_ops.begin(), cpu_ops.end(), vk_ops.begin(), vk_ops.end(),
                      std::back_inserter(only_cpu));
  std::set_difference(vk_ops.begin(), vk_ops.end(), cpu_ops.begin(), cpu_ops.end(),
                      std::back_inserter(only_vk));
  INFO("only cpu: " << only_cpu.size() << ", only vulkan: " << only_vk.size());
  CHECK(only_cpu.empty());
  CHECK(only_vk.empty());
  for (const std::string& op : vk_ops) CHECK(op_is_known(op));
}
#endif
