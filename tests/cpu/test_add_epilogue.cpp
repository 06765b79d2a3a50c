// A residual Add takes the activations after it as its epilogue on the cpu
// executor (LayerGraph: an Add is an epilogue target, plugins/cpu/kernels/
// elementwise.cpp applies it to each piece of the sum while it is in cache):
// same-shape operands (one long coalesced row, cut into pieces for the threads),
// a per-channel [C,1,1] operand (rows of one channel), Relu and Clip, at 1 and 2
// threads and batches 1 and 3, against the float64 reference; an Add whose sum
// has a second reader keeps the Relu as a layer of its own.
#include <catch2/catch.hpp>
#include <random>

#include "cpu_plugin.h"
#include "graph_helpers.h"
#include "reference.h"

using cpu_test::GraphMaker;
using cpu_test::numel;

namespace {

// x [N,C,H,W] + (a second input made from x by a 1x1 conv, or a [C,1,1]
// constant) -> activation -> "out"; with `second_reader` the sum is also an output.
GraphMaker add_then(int64_t N, int64_t C, int64_t H, bool per_channel, const std::string& act,
                    bool second_reader, std::mt19937_64& rng) {
  GraphMaker m;
  m.input("x", {N, C, H, H}, true);
  if (per_channel) {
    m.constant("b", {C, 1, 1}, cpu_test::random_floats(size_t(C), rng()));
  } else {
    m.constant("W", {C, C, 1, 1}, cpu_test::random_floats(size_t(C * C), rng()));
    m.node("Conv", {"x", "W"}, "b").set_attr_ints("kernel_shape", {1, 1});
  }
  m.node("Add", {"x", "b"}, "sum");
  if (act == "Clip") {
    m.constant("lo", {}, {-0.5f});
    m.constant("hi", {}, {0.75f});
    m.node(act, {"sum", "lo", "hi"}, "out");
  } else {
    m.node(act, {"sum"}, "out");
  }
  m.output("out");
  if (second_reader) m.output("sum");
  return m;
}

std::vector<std::string> layer_ops(const nlohmann::json& describe) {
  std::vector<std::string> ops;
  for (const auto& L : describe["layers"]) {
    std::string s;
    for (const auto& o : L["ops"]) s += (s.empty() ? "" : "+") + o.get<std::string>();
    ops.push_back(s);
  }
  return ops;
}

}  // namespace

TEST_CASE("An Add takes the Relu or Clip after it and matches the float64 reference", "[cpu][add]") {
  std::mt19937_64 rng(77);
  for (bool per_channel : {false, true})
    for (const char* act : {"Relu", "Clip"})
      for (int64_t N : {1, 3}) {
        // 48 x 40 x 40 = 76800 values per sample: pieces of 8192 end inside channels.
        INFO((per_channel ? "Add of a [C,1,1] constant" : "Add of two activations")
             << ", " << act << ", batch " << N);
        GraphMaker m = add_then(N, 48, 40, per_channel, act, false, rng);
        for (const cpu_test::ReferenceRun& r :
             cpu_test::check_against_reference(m.graph(), {N, 48, 40, 40}, rng, 1e-5))
          CHECK(layer_ops(r.describe).back() == std::string("Add+") + act);
      }
}

TEST_CASE("An Add whose sum has another reader keeps the activation apart", "[cpu][add]") {
  std::mt19937_64 rng(78);
  GraphMaker m = add_then(2, 8, 6, false, "Relu", true, rng);
  cpu_test::Executor ex(m.graph(), "{\"threads\": 1}");
  REQUIRE(ex.ok());
  const std::vector<std::string> ops = layer_ops(ex.describe());
  CHECK(ops == std::vector<std::string>{"Conv", "Add", "Relu"});
}
