// A residual Add takes the activations after it as its epilogue on the cpu
// executor (LayerGraph: an Add is an epilogue target, plugins/cpu/kernels/
// elementwise.cpp applies it to each piece of the sum while it is in cache):
// same-shape operands (one long coalesced row, cut into pieces for the threads),
// a per-channel [C,1,1] operand (rows of one channel), Relu and Clip, at 1 and 2
// threads and batches 1 and 3, against the float64 reference; an Add whose sum
// has a second reader keeps the Relu as a layer of its own. Then a residual Add
// joined to the packed 1x1 conv before it (BN, the Add, Relu in its registers),
// kept apart by the option residual_add = "separate" or a second reader, and
// one joined to a strided 1x1 conv on AVX-512; CMake runs it again with the
// packed kernel held to AVX2 and switched off.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <random>
#include <string>

#include "cpu_plugin.h"
#include "graph_helpers.h"
#include "reference.h"

using cpu_test::GraphMaker;
using cpu_test::layer_ops;
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
        // The Add as a layer of its own (else it joins the 1x1 conv: the test case after).
        for (const cpu_test::ReferenceRun& r : cpu_test::check_against_reference(
                 m.graph(), {N, 48, 40, 40}, rng, 1e-5, ", \"residual_add\": \"separate\""))
          CHECK(layer_ops(r.describe).back() == std::string("Add+") + act);
      }
}

TEST_CASE("An Add whose sum has another reader keeps the activation apart", "[cpu][add]") {
  std::mt19937_64 rng(78);
  GraphMaker m = add_then(2, 8, 6, false, "Relu", true, rng);
  cpu_test::Executor ex(m.graph(), "{\"threads\": 1, \"residual_add\": \"separate\"}");
  REQUIRE(ex.ok());
  const std::vector<std::string> ops = layer_ops(ex.describe());
  CHECK(ops == std::vector<std::string>{"Conv", "Add", "Relu"});
}

namespace {

// x [N,C,H,H] -> 1x1 conv to C channels + BatchNormalization -> Add with x (as
// the Add's first or second operand) -> `act` ("" for none) -> "out": a residual
// block's end, which the packed 1x1 kernel takes whole (EpilogueSteps::kResidual).
GraphMaker residual_block(int64_t N, int64_t C, int64_t H, bool skip_first, const std::string& act,
                          std::mt19937_64& rng) {
  GraphMaker m;
  m.input("x", {N, C, H, H}, true);
  m.constant("W", {C, C, 1, 1}, cpu_test::random_floats(size_t(C * C), rng()));
  m.node("Conv", {"x", "W"}, "y").set_attr_ints("kernel_shape", {1, 1});
  m.batchnorm("y", "bn", C, rng);
  m.node("Add", skip_first ? std::vector<std::string>{"x", "bn"} : std::vector<std::string>{"bn", "x"},
         act.empty() ? "out" : "sum");
  if (!act.empty()) m.node(act, {"sum"}, "out");
  m.output("out");
  return m;
}

}  // namespace

TEST_CASE("A residual Add joins the packed 1x1 conv before it and matches the float64 reference",
          "[cpu][add][residual]") {
  std::mt19937_64 rng(79);
  // Planes of 3x3 (9 columns: one masked vector), 10x10 (a vector and 4 columns in
  // lanes), 7x7, 40x40 (several chunks); channel counts that make uneven blocks.
  const struct { int64_t C, H; } shapes[] = {{16, 3}, {24, 10}, {13, 7}, {40, 40}, {96, 14}};
  const char* isa = std::getenv("FRUGAL_CPU_MAX_ISA");  // CMake's runs with the packed kernel off
  const bool packed = isa == nullptr || std::string(isa) != "none";
  for (const auto& sh : shapes)
    for (bool skip_first : {false, true})
      for (const char* act : {"Relu", ""})
        for (int64_t N : {1, 3}) {
          INFO("C " << sh.C << ", " << sh.H << "x" << sh.H << ", skip " << (skip_first ? "first" : "second")
                    << ", activation '" << act << "', batch " << N);
          GraphMaker m = residual_block(N, sh.C, sh.H, skip_first, act, rng);
          const std::string tail = *act ? std::string("+") + act : "";
          for (const cpu_test::ReferenceRun& r :
               cpu_test::check_against_reference(m.graph(), {N, sh.C, sh.H, sh.H}, rng, 1e-5)) {
            const std::vector<std::string> ops = layer_ops(r.describe);
            if (packed)
              CHECK(ops == std::vector<std::string>{"Conv+BatchNormalization+Add" + tail});
            else  // the sgemm path adds nothing: the Add stays a layer
              CHECK(ops == std::vector<std::string>{"Conv+BatchNormalization", "Add" + tail});
          }
          // Kept apart on request, with the same result.
          for (const cpu_test::ReferenceRun& r : cpu_test::check_against_reference(
                   m.graph(), {N, sh.C, sh.H, sh.H}, rng, 1e-5, ", \"residual_add\": \"separate\""))
            CHECK(layer_ops(r.describe) == std::vector<std::string>{"Conv+BatchNormalization", "Add" + tail});
        }
}

TEST_CASE("A residual Add joins a strided 1x1 conv (ResNet's downsampling) and matches the float64 reference",
          "[cpu][add][residual]") {
  // x -> MaxPool 1x1/2 (the skip: every other pixel) and x -> 1x1 conv at
  // stride 2 + BN -> Add -> Relu; on AVX-512 the conv takes the packed tile on
  // a subsampled copy of x and the Add joins it. Odd and even planes, uneven blocks.
  std::mt19937_64 rng(81);
  const char* isa = std::getenv("FRUGAL_CPU_MAX_ISA");
  const bool packed = __builtin_cpu_supports("avx512f") && (isa == nullptr || std::string(isa) == "avx512");
  const struct { int64_t C, H; } shapes[] = {{16, 7}, {40, 28}, {13, 15}, {64, 14}};
  for (const auto& sh : shapes)
    for (int64_t N : {1, 3}) {
      INFO("C " << sh.C << ", " << sh.H << "x" << sh.H << ", batch " << N);
      GraphMaker m;
      m.input("x", {N, sh.C, sh.H, sh.H}, true);
      frugal::Node& pool = m.node("MaxPool", {"x"}, "skip");
      pool.set_attr_ints("kernel_shape", {1, 1});
      pool.set_attr_ints("strides", {2, 2});
      m.constant("W", {sh.C, sh.C, 1, 1}, cpu_test::random_floats(size_t(sh.C * sh.C), rng()));
      frugal::Node& conv = m.node("Conv", {"x", "W"}, "y");
      conv.set_attr_ints("kernel_shape", {1, 1});
      conv.set_attr_ints("strides", {2, 2});
      m.batchnorm("y", "bn", sh.C, rng);
      m.node("Add", {"bn", "skip"}, "sum");
      m.node("Relu", {"sum"}, "out");
      m.output("out");
      for (const cpu_test::ReferenceRun& r :
           cpu_test::check_against_reference(m.graph(), {N, sh.C, sh.H, sh.H}, rng, 1e-5)) {
        const std::vector<std::string> ops = layer_ops(r.describe);
        if (packed)
          CHECK(ops == std::vector<std::string>{"MaxPool", "Conv+BatchNormalization+Add+Relu"});
        else
          CHECK(ops == std::vector<std::string>{"MaxPool", "Conv+BatchNormalization", "Add+Relu"});
      }
    }
}

TEST_CASE("A residual Add stays apart where the conv's output has another reader or the option says so",
          "[cpu][add][residual]") {
  std::mt19937_64 rng(80);
  GraphMaker m = residual_block(2, 16, 6, false, "Relu", rng);
  m.output("bn");  // the conv's output is read outside the Add too
  cpu_test::Executor ex(m.graph(), "{\"threads\": 1}");
  REQUIRE(ex.ok());
  CHECK(layer_ops(ex.describe()) == std::vector<std::string>{"Conv+BatchNormalization", "Add+Relu"});
  cpu_test::Executor bad(residual_block(1, 8, 4, false, "", rng).graph(), "{\"residual_add\": \"yes\"}");
  CHECK_FALSE(bad.ok());
  CHECK_THAT(bad.created.message, Catch::Contains("residual_add"));
}
