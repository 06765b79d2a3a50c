// Plans that split the batch on Vulkan, with the cpu executor's accounting:
// random valid plans (tests/support/memory_model.h) on the zoo toys, on a net
// of 1x1 convolutions, pools, Concat, Add and Gemm (where the cpu executor needs
// no workspace either, so the two peaks must be equal), and on SqueezeNet 1.1
// at batch 2, and a plan whose last layer reads an input made one sample at a
// time (SqueezeNet's 3x3 convs run as Winograd, with workspace in the arena).
// For every plan: each step is one call at its batch (the run report's
// "calls"); outputs equal the whole-batch run within 1e-5
// relative; peak_bytes equals the memory model recomputed from what the plugin
// publishes (and the cpu executor's peak where both report the same
// workspace); a budget one byte below is refused before running with both
// numbers; exactly the peak runs in an arena of exactly that many bytes; the
// validation layer stays silent.
#include <catch2/catch.hpp>
#include <cmath>
#include <iostream>
#include <random>

#include "vk_test_util.h"
#include "zoo/zoo.h"

using exec_test::MemoryModel;
using vk_test::HostTensor;

namespace {

std::vector<HostTensor> host_inputs(const std::map<std::string, frugal::RefTensor>& in) {
  std::vector<HostTensor> v;
  for (const auto& kv : in)
    v.push_back(HostTensor{kv.first, kv.second.dims,
                           std::vector<float>(kv.second.data.begin(), kv.second.data.end())});
  return v;
}

// |got - want| <= 1e-5 |want| + 1e-6 everywhere (NaN: never).
bool close(const std::vector<HostTensor>& got, const std::vector<HostTensor>& want, std::string& where) {
  for (size_t k = 0; k < want.size(); ++k) {
    if (got[k].data.size() != want[k].data.size()) return where = want[k].name + ": sizes differ", false;
    for (size_t i = 0; i < want[k].data.size(); ++i) {
      const double a = got[k].data[i], b = want[k].data[i];
      if (!(std::fabs(a - b) <= 1e-5 * std::fabs(b) + 1e-6)) {
        where =
            want[k].name + "[" + std::to_string(i) + "]: " + std::to_string(a) + " vs " + std::to_string(b);
        return false;
      }
    }
  }
  return true;
}

// x [N,8,8,8] -> 1x1 conv(16)+Relu -> (maxpool 2 | avgpool 2) -> Concat -> 1x1 conv(32) -> Add(residual of
// the concat via a 1x1 conv) -> GlobalAveragePool -> Flatten -> Gemm(10): no im2col anywhere.
frugal::Graph pointwise_net() {
  vk_test::GraphMaker m;
  m.input("x", {-1, 8, 8, 8});
  m.node("Conv", "c1", {"x", m.weight("w1", {16, 8, 1, 1}, -0.3f, 0.3f), m.weight("b1", {16})}, {"a"});
  m.node("Relu", "r1", {"a"}, {"r"});
  frugal::Node& p1 = m.node("MaxPool", "mp", {"r"}, {"p1"});
  p1.set_attr_ints("kernel_shape", {2, 2});
  p1.set_attr_ints("strides", {2, 2});
  frugal::Node& p2 = m.node("AveragePool", "ap", {"r"}, {"p2"});
  p2.set_attr_ints("kernel_shape", {2, 2});
  p2.set_attr_ints("strides", {2, 2});
  m.node("Concat", "cat", {"p1", "p2"}, {"c"}).set_attr_int("axis", 1);
  m.node("Conv", "c2", {"c", m.weight("w2", {32, 32, 1, 1}, -0.2f, 0.2f)}, {"d"});
  m.node("Conv", "c3", {"c", m.weight("w3", {32, 32, 1, 1}, -0.2f, 0.2f)}, {"e"});
  m.node("Add", "add", {"d", "e"}, {"s"});
  m.node("GlobalAveragePool", "gap", {"s"}, {"g"});
  m.node("Flatten", "flat", {"g"}, {"f"});
  m.node("Gemm", "fc", {"f", m.weight("wf", {10, 32}, -0.2f, 0.2f), m.weight("bf", {10})}, {"y"})
      .set_attr_int("transB", 1);
  m.output("y");
  return m.g;
}

// x [N,128,9,9] -> 3x3 conv(16), a Winograd conv whose products' reduction
// (128) splits -> Relu -> 3x3 stride-2 conv(24), a direct conv whose reduction
// (144) splits -> GlobalAveragePool -> Flatten -> Gemm(10); with {"min_groups": N}.
frugal::Graph split_net() {
  vk_test::GraphMaker m;
  m.input("x", {-1, 128, 9, 9});
  frugal::Node& c1 =
      m.node("Conv", "c1", {"x", m.weight("w1", {16, 128, 3, 3}, -0.1f, 0.1f), m.weight("b1", {16})}, {"a"});
  c1.set_attr_ints("kernel_shape", {3, 3});
  c1.set_attr_ints("pads", {1, 1, 1, 1});
  m.node("Relu", "r1", {"a"}, {"r"});
  frugal::Node& c2 = m.node("Conv", "c2", {"r", m.weight("w2", {24, 16, 3, 3}, -0.2f, 0.2f)}, {"c"});
  c2.set_attr_ints("kernel_shape", {3, 3});
  c2.set_attr_ints("strides", {2, 2});
  m.node("GlobalAveragePool", "gap", {"c"}, {"g"});
  m.node("Flatten", "flat", {"g"}, {"f"});
  m.node("Gemm", "fc", {"f", m.weight("wf", {10, 24}, -0.2f, 0.2f), m.weight("bf", {10})}, {"y"})
      .set_attr_int("transB", 1);
  m.output("y");
  return m.g;
}

uint64_t g_compactions = 0;  // compactions recorded as device copies, over every plan run
int g_winograd_layers = 0;   // layers with workspace (Winograd convs) that plans ran

// Runs `plans` of a batch-`batch` request of g on both executors and checks
// everything the file's header says. Returns how many plans it compared peaks
// with the cpu executor for.
// options: the Vulkan executor's; by default no conv splits its reduction (as
// on a CPU device), so only Winograd convs have workspace; with split convs
// ({"min_groups": N}) a split conv's partial sums grow with the batch.
int check_plans(const frugal::Graph& g, int64_t batch, int random_plans, uint64_t seed,
                const std::string& options = "{\"min_groups\": 0}") {
  exec_test::PluginExecutor cpu(
      exec_test::executor_api("cpu"), g,
      "{\"threads\": 1, \"residual_add\": \"separate\"}");  // the cpu plugin before any Vulkan work (see
                                                            // test_cpu_agreement.cpp); Adds as layers, as on
                                                            // Vulkan
  REQUIRE(cpu.ok());
  vk_test::Executor vk(g, options);
  const bool split = vk.describe()["vulkan"]["split_layers"].get<int64_t>() > 0;
  INFO(vk.created.message);
  REQUIRE(vk.ok());
  MemoryModel mm(vk);
  const size_t layers = mm.description()["layers"].size();
  // Same layers; the same workspace everywhere? Then the peaks must agree exactly.
  bool same_ws = true;
  for (size_t l = 0; l < layers; ++l) {
    const frugal_layer_bytes a = vk.layer_bytes(int(l), int(batch)), b = cpu.layer_bytes(int(l), int(batch));
    CHECK(a.in_bytes == b.in_bytes);
    CHECK(a.out_bytes == b.out_bytes);
    // Only a Winograd conv uses arena scratch here (ungated nets, plugins/vulkan/README.md): one
    // sample's transforms, the same at every batch since samples take turns in it.
    if (!split) CHECK(a.ws_bytes == vk.layer_bytes(int(l), 1).ws_bytes);
    if (a.ws_bytes > 0 && !split) ++g_winograd_layers;
    same_ws = same_ws && a.ws_bytes == b.ws_bytes;
  }
  const auto in = host_inputs(vk_test::random_inputs(g, batch, seed));
  std::vector<HostTensor> whole;
  REQUIRE(vk.run(in, whole).ok());

  std::mt19937_64 rng(seed);
  int compared = 0;
  uint64_t compactions = 0, moved = 0, copies = 0;
  for (int p = 0; p <= random_plans; ++p) {
    // p == 0: whole batch through the plan path; p == 1: every layer but the
    // last one sample at a time, the last on all (its input made in `batch` steps).
    std::vector<exec_test::Step> steps;
    if (p == 0) steps = mm.whole_batch(batch);
    if (p == 1) {
      for (int64_t j = 0; j < batch; ++j)
        for (size_t l = 0; l + 1 < layers; ++l) steps.push_back({int(l), j, 1});
      steps.push_back({int(layers - 1), 0, batch});
    }
    if (p > 1) steps = mm.random_plan(batch, rng);
    const nlohmann::json plan = MemoryModel::to_json(steps, mm.description());
    const uint64_t peak = mm.peak(steps, batch);
    INFO("plan " << p << ": " << plan.dump());

    // A budget of exactly the peak: runs, in an arena of exactly that size.
    REQUIRE(vk.set_budget(peak).ok());
    std::vector<HostTensor> out;
    nlohmann::json report;
    const vk_test::Status st = vk.run(in, out, plan, &report);
    INFO(st.message);
    REQUIRE(st.ok());
    std::string where;
    if (!close(out, whole, where)) FAIL_CHECK("differs from the whole-batch run at " << where);
    CHECK(report["peak_bytes"].get<uint64_t>() == peak);
    CHECK(report["arena_bytes"].get<uint64_t>() == peak);
    CHECK(report["extent_bytes"].get<uint64_t>() <= peak);
    for (const auto& st : report["steps"]) CHECK(st["calls"] == 1);  // each step one call at its batch
    g_compactions += report["compactions"].get<uint64_t>();
    compactions += report["compactions"].get<uint64_t>();
    moved += report["moved_bytes"].get<uint64_t>();
    copies += report["move_copies"].get<uint64_t>();
    // The placement extension foresees the moves the run recorded.
    nlohmann::json placed;
    REQUIRE(vk.place(exec_test::placement_extension("vulkan"), plan, int32_t(batch), peak, &placed).ok());
    CHECK(placed["moved_bytes"] == report["moved_bytes"]);
    CHECK(placed["compactions"] == report["compactions"]);
    if (same_ws) {
      std::vector<HostTensor> cpu_out;
      nlohmann::json cpu_report;
      REQUIRE(cpu.set_budget(peak).ok());  // the same capacity (without one the cpu arena grows to move less)
      REQUIRE(cpu.run(in, cpu_out, plan, &cpu_report).ok());
      CHECK(report["peak_bytes"] == cpu_report["peak_bytes"]);
      CHECK(report["moved_bytes"] == cpu_report["moved_bytes"]);  // the same allocator, the same moves
      ++compared;
    }

    // One byte below: refused before running, with both numbers.
    if (peak > 0) {
      REQUIRE(vk.set_budget(peak - 1).ok());
      out.clear();
      const vk_test::Status refused = vk.run(in, out, plan);
      CHECK(refused.code == FRUGAL_ERR_BUDGET);
      CHECK(refused.message.find(std::to_string(peak) + " bytes") != std::string::npos);
      CHECK(refused.message.find(std::to_string(peak - 1) + " bytes") != std::string::npos);
      CHECK(std::isnan(out[0].data[0]));  // nothing ran
    }
  }
  double per_byte = 0;
  frugal_error err{};
  CHECK(exec_test::placement_extension("vulkan").time_move(vk.handle(), 1 << 20, 2, &per_byte, &err) ==
        FRUGAL_OK);
  CHECK(per_byte > 0);
  CHECK(vk.validation_errors() == 0);
  std::cout << "  " << random_plans + 1 << " plans at budget = peak: " << compactions << " compactions, "
            << moved << " bytes moved in " << copies << " copy commands\n";
  return compared;
}

}  // namespace

TEST_CASE("random plans on the zoo toys run within their peak and match the whole batch", "[vulkan][plans]") {
  VK_REQUIRE_DEVICE();
  for (const char* name : {"toy_linear", "toy_branched", "toy_allops"}) {
    INFO(name);
    check_plans(frugal::build_zoo_model(name, 3), 4, 6, 101);
  }
  // Inputs and outputs copied in submissions of their own (what runs whose
  // tensors do not fit in the staging buffer do), not inside the run's.
  check_plans(frugal::build_zoo_model("toy_branched", 3), 4, 6, 107,
              "{\"min_groups\": 0, \"staged_io\": false}");
  CHECK(g_compactions > 0);  // arenas of exactly the peak made the allocator slide chunks on the device
}

TEST_CASE("where both executors need no workspace, their peaks for the same plan are equal",
          "[vulkan][plans]") {
  VK_REQUIRE_DEVICE();
  CHECK(check_plans(pointwise_net(), 5, 8, 7) == 9);
}

// Convs that split their reduction (forced here; a GPU's default) keep their
// partial sums in the arena: plans still run in exactly their peak. (Texel
// convs leave their reduction whole: conv_texel off.)
TEST_CASE("random plans with split-K convs run within their peak", "[vulkan][plans][splitk]") {
  VK_REQUIRE_DEVICE();
  check_plans(split_net(), 4, 6, 103, "{\"min_groups\": 100000, \"conv_texel\": \"off\"}");
  vk_test::Executor vk(split_net(), "{\"min_groups\": 100000, \"conv_texel\": \"off\"}");
  REQUIRE(vk.ok());
  CHECK(vk.describe()["vulkan"]["split_layers"] == 2);
  // The direct conv's partial sums grow with the batch; the Winograd conv's do not (samples take turns).
  CHECK(vk.layer_bytes(1, 4).ws_bytes == 4 * vk.layer_bytes(1, 1).ws_bytes);
  CHECK(vk.layer_bytes(1, 1).ws_bytes == 2 * 24 * 4 * 4 * 4);  // 2 slices x 24 kernels x 4 x 4 pixels
  CHECK(vk.layer_bytes(0, 4).ws_bytes == vk.layer_bytes(0, 1).ws_bytes);
}

// A call's samples run side by side, so a call on n samples splits its
// reduction only as far as min_groups needs: c2 has one work group per
// sample, so at min_groups 2 one sample takes 2 slices and 2 or more samples
// none, and its workspace does not grow with the batch.
TEST_CASE("a split conv splits less as its call has more samples", "[vulkan][plans][splitk]") {
  VK_REQUIRE_DEVICE();
  vk_test::Executor vk(split_net(), "{\"min_groups\": 2, \"winograd\": \"off\", \"conv_texel\": \"off\"}");
  REQUIRE(vk.ok());
  CHECK(vk.layer_bytes(1, 1).ws_bytes == 2 * 24 * 4 * 4 * 4);  // 2 slices x 24 kernels x 4 x 4 pixels
  CHECK(vk.layer_bytes(1, 2).ws_bytes == 0);
  CHECK(vk.layer_bytes(1, 4).ws_bytes == 0);
  check_plans(split_net(), 4, 6, 109, "{\"min_groups\": 2, \"winograd\": \"off\", \"conv_texel\": \"off\"}");
}

TEST_CASE("random plans on SqueezeNet 1.1 at batch 2", "[vulkan][plans][slow]") {
  VK_REQUIRE_DEVICE();
  g_winograd_layers = 0;
  check_plans(frugal::build_zoo_model("squeezenet1_1", 5), 2, 2, 29);
  CHECK(g_winograd_layers == 8);  // its 3x3 expand convs, Winograd with their workspace in the plans
}
