// Weights lent by address and given back one by one (plugin.h,
// FRUGAL_EXT_HOST_WEIGHTS's create_releasing): the cpu executor reports every
// lent weight once, reads none after reporting it, and runs as one made from
// the model's bytes; a host that gives its model to ExecutorClient gets the same
// executor and an empty model.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>

#include "cpu_plugin.h"
#include "frugal/model/onnx_export.h"
#include "graph_helpers.h"
#include "loader/executor_client.h"

using namespace frugal;
using cpu_test::GraphMaker;

namespace {

// x [N, 64] -> Gemm (B [128, 64] transposed, bias) -> Relu -> Gemm (B [128, 32],
// alpha 0.5) -> out [N, 32]: two weights of 4 KiB and more (lent by address) on
// the packed path, both layouts of B, and a bias small enough to go inline.
Graph two_gemms() {
  GraphMaker m;
  m.input("x", {1, 64}, true);
  m.constant("w1", {128, 64}, cpu_test::random_floats(128 * 64, 1));
  m.constant("b1", {128}, cpu_test::random_floats(128, 2));
  m.constant("w2", {128, 32}, cpu_test::random_floats(128 * 32, 3));
  m.node("Gemm", {"x", "w1", "b1"}, "h").set_attr_int("transB", 1);
  m.node("Relu", {"h"}, "r");
  m.node("Gemm", {"r", "w2"}, "out").set_attr_float("alpha", 0.5f);
  m.output("out");
  return m.graph();
}

// The host's side of create_releasing: each weight it lent, by address; a
// reported one is overwritten with NaN, so that a read after the report would
// show in the outputs.
struct Lender {
  std::map<uint64_t, std::vector<uint8_t>*> lent;
  std::vector<uint64_t> reported;
  int unknown = 0;

  explicit Lender(Graph& g) {
    for (auto& [name, t] : g.tensors)
      if (t.is_initializer && t.data.size() >= 4096)
        lent[reinterpret_cast<uintptr_t>(t.data.data())] = &t.data;
  }
  static void done(void* host, uint64_t address) {
    auto& self = *static_cast<Lender*>(host);
    self.reported.push_back(address);
    const auto it = self.lent.find(address);
    if (it == self.lent.end()) {
      ++self.unknown;
      return;
    }
    std::vector<float> nan(it->second->size() / 4, std::numeric_limits<float>::quiet_NaN());
    std::memcpy(it->second->data(), nan.data(), it->second->size());
    self.lent.erase(it);
  }
};

std::vector<float> run_once(exec_test::PluginExecutor& ex, int64_t batch) {
  const std::vector<exec_test::HostTensor> in = exec_test::random_inputs(ex.describe(), batch, 7);
  std::vector<exec_test::HostTensor> out;
  const exec_test::Status s = ex.run(in, out);
  INFO(s.message);
  REQUIRE(s.ok());
  return out.at(0).data;
}

}  // namespace

TEST_CASE("create_releasing: each lent weight is given back once and not read after", "[cpu][host_weights]") {
  Graph g = two_gemms();
  const Graph original = g;
  Lender lender(g);
  REQUIRE(lender.lent.size() == 2);
  const std::string onnx = save_onnx_bytes(g, WeightsAs::HostAddresses);
  const frugal_host_weights_extension& ext = exec_test::host_weights_extension("cpu");
  frugal_executor* h = nullptr;
  frugal_error err{};
  const frugal_status st =
      ext.create_releasing(onnx.data(), onnx.size(), "{\"threads\": 2}", &Lender::done, &lender, &h, &err);
  INFO(err.message);
  REQUIRE(st == FRUGAL_OK);
  exec_test::PluginExecutor given(cpu_test::api(), h);
  CHECK(lender.reported.size() == 2);
  CHECK(lender.lent.empty());
  CHECK(lender.unknown == 0);

  cpu_test::Executor copied(original, "{\"threads\": 2}");
  REQUIRE(copied.ok());
  for (int64_t batch : {1, 9}) {
    const std::vector<float> a = run_once(given, batch), b = run_once(copied, batch);
    REQUIRE(a.size() == size_t(batch * 32));
    CHECK(a == b);  // bit for bit: NaN where a reported weight was read afterwards
  }
}

TEST_CASE("create_releasing refuses a NULL done", "[cpu][host_weights][errors]") {
  const Graph g = two_gemms();
  const std::string onnx = save_onnx_bytes(g, WeightsAs::HostAddresses);
  frugal_executor* h = nullptr;
  frugal_error err{};
  CHECK(exec_test::host_weights_extension("cpu").create_releasing(
            onnx.data(), onnx.size(), nullptr, nullptr, nullptr, &h, &err) == FRUGAL_ERR_INVALID_ARGUMENT);
  CHECK(std::string(err.message) == "create_releasing: done is NULL");
  CHECK(h == nullptr);
}

TEST_CASE("a model given to ExecutorClient is emptied and runs as one lent", "[cpu][host_weights]") {
  const LoadedPlugin& cpu = exec_test::executor_plugin("cpu");
  Graph g = two_gemms();
  const Graph original = g;
  ExecutorClient given(cpu, std::move(g), {{"threads", 1}});
  CHECK(g.tensors.empty());
  CHECK(g.nodes.empty());
  ExecutorClient kept(cpu, original, {{"threads", 1}});
  Tensor x({3, 64});
  for (size_t i = 0; i < x.data.size(); ++i) x.data[i] = std::sin(float(i));
  std::vector<Tensor> a, b;
  given.run(nullptr, {x}, a);
  kept.run(nullptr, {x}, b);
  REQUIRE(a.size() == 1);
  REQUIRE(b.size() == 1);
  CHECK(a[0].data == b[0].data);
}
