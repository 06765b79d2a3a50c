// Swish (a Sigmoid of a layer's output and the Mul of that output by it, as
// torchvision exports SiLU) joins the layer's epilogue on the cpu executor
// (LayerGraph::fuses_swish): after a 1x1 conv (sgemm), a 3x3 conv (oneDNN where
// the build has it), a depthwise conv (direct kernel), a Gemm and a standalone
// BatchNormalization, both operand orders of the Mul, at 1 and 2 threads and
// batches 1 and 3, against the float64 reference; a Sigmoid whose input has a
// third reader stays a layer of its own.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <sstream>

#include "cpu_plugin.h"
#include "graph_helpers.h"
#include "reference.h"

using cpu_test::GraphMaker;
using cpu_test::HostTensor;
using cpu_test::numel;

namespace {

// Conv (k x k, `group`) -> BN -> t; Swish(t) -> "out" (Mul(t, s) or Mul(s, t)).
GraphMaker swish_conv(int64_t N, int64_t C, int64_t M, int64_t k, int64_t group, bool swap,
                      std::mt19937_64& rng) {
  GraphMaker m;
  m.input("x", {N, C, 12, 12}, true);
  const std::vector<int64_t> wd = {M, C / group, k, k};
  m.constant("W", wd, cpu_test::random_floats(size_t(numel(wd)), rng()));
  frugal::Node& n = m.node("Conv", {"x", "W"}, "y");
  n.set_attr_ints("kernel_shape", {k, k});
  n.set_attr_ints("pads", {k / 2, k / 2, k / 2, k / 2});
  n.set_attr_int("group", group);
  m.batchnorm("y", "t", M, rng, 3.0f, 2.0f);
  m.node("Sigmoid", {"t"}, "s");
  m.node("Mul", swap ? std::vector<std::string>{"s", "t"} : std::vector<std::string>{"t", "s"}, "out");
  m.output("out");
  return m;
}

// Runs `m` at 1 and 2 threads and batch N against the reference; returns the layers' ops.
std::vector<std::string> check_against_reference(GraphMaker& m, const std::vector<int64_t>& xd,
                                                 std::mt19937_64& rng) {
  std::vector<std::string> ops;
  for (const cpu_test::ReferenceRun& r : cpu_test::check_against_reference(m.graph(), xd, rng, 1e-4)) {
    ops.clear();
    for (const auto& L : r.describe["layers"]) {
      std::string s;
      for (const auto& o : L["ops"]) s += (s.empty() ? "" : "+") + o.get<std::string>();
      ops.push_back(s);
    }
  }
  return ops;
}

}  // namespace

TEST_CASE("Swish joins the conv, Gemm or BN layer before it and matches the float64 reference",
          "[cpu][swish]") {
  std::mt19937_64 rng(4242);
  struct Case {
    int64_t C, M, k, group;
  };
  for (const Case& c : {Case{24, 40, 1, 1}, Case{16, 48, 3, 1}, Case{32, 32, 3, 32}, Case{32, 32, 5, 32}})
    for (int64_t N : {1, 3})
      for (bool swap : {false, true}) {
        INFO("Conv " << c.C << "->" << c.M << " k" << c.k << " group " << c.group << " batch " << N
                     << (swap ? " Mul(s, t)" : " Mul(t, s)"));
        GraphMaker m = swish_conv(N, c.C, c.M, c.k, c.group, swap, rng);
        const std::vector<std::string> ops = check_against_reference(m, {N, c.C, 12, 12}, rng);
        CHECK(ops == std::vector<std::string>{"Conv+BatchNormalization+Sigmoid+Mul"});
      }
  // Gemm -> Swish; BatchNormalization alone -> Swish.
  GraphMaker g;
  g.input("x", {3, 20}, true);
  g.constant("W", {20, 12}, cpu_test::random_floats(240, rng()));
  g.node("Gemm", {"x", "W"}, "t");
  g.node("Sigmoid", {"t"}, "s");
  g.node("Mul", {"t", "s"}, "out");
  g.output("out");
  CHECK(check_against_reference(g, {3, 20}, rng) == std::vector<std::string>{"Gemm+Sigmoid+Mul"});
  GraphMaker b;
  b.input("x", {2, 4, 5, 5}, true);
  for (const char* p : {"g", "b", "mu"}) b.constant(p, {4}, cpu_test::random_floats(4, rng()));
  b.constant("var", {4}, {0.5f, 1.0f, 1.5f, 2.0f});
  b.node("BatchNormalization", {"x", "g", "b", "mu", "var"}, "t");
  b.node("Sigmoid", {"t"}, "s");
  b.node("Mul", {"s", "t"}, "out");
  b.output("out");
  CHECK(check_against_reference(b, {2, 4, 5, 5}, rng) ==
        std::vector<std::string>{"BatchNormalization+Sigmoid+Mul"});
}

TEST_CASE("a Sigmoid whose input has another reader is no Swish: it stays a layer", "[cpu][swish]") {
  std::mt19937_64 rng(99);
  GraphMaker m;
  m.input("x", {2, 8, 6, 6}, true);
  m.constant("W", {8, 8, 1, 1}, cpu_test::random_floats(64, rng()));
  frugal::Node& n = m.node("Conv", {"x", "W"}, "t");
  n.set_attr_ints("kernel_shape", {1, 1});
  m.node("Sigmoid", {"t"}, "s");
  m.node("Mul", {"t", "s"}, "u");
  m.node("Add", {"u", "t"}, "out");  // t's third reader
  m.output("out");
  CHECK(check_against_reference(m, {2, 8, 6, 6}, rng) ==
        std::vector<std::string>{"Conv", "Sigmoid", "Mul", "Add"});
}
