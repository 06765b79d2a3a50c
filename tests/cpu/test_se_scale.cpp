// A squeeze-and-excite Mul (x * s, s one value per sample and channel) joins
// the packed 1x1 conv that reads its product: the tile scales each input row
// as it loads it (plugins/cpu/kernels/conv_1x1.h), so the Mul's pass and its
// tensor go. Checked against the float64 reference (planes whose columns end in
// a full vector, a masked vector and the rows-in-lanes tail; uneven channel
// blocks; BN, Relu and a residual Add joined too; both operand orders; samples
// with different scales), bit for bit against the same model with the option
// se_scale = "separate", and the near misses that must stay apart. CMake runs it
// again with the packed kernel held to AVX2 and switched off.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdlib>
#include <random>
#include <string>

#include "cpu_plugin.h"
#include "graph_helpers.h"
#include "reference.h"

using cpu_test::GraphMaker;
using cpu_test::layer_ops;

namespace {

// What a test's SE block looks like around the Mul.
struct Block {
  int64_t N = 1, C = 16, M = 16, H = 8, W = 8;
  bool scale_first = false;    // Mul(s, x) instead of Mul(x, s)
  bool residual = false;       // ... -> Conv + BN -> Add with x (M == C)
  bool second_reader = false;  // the product is also a graph output
  int64_t stride = 1;          // of the conv after the Mul
};

// x [N,C,H,W] -> Relu -> xr; xr -> GlobalAveragePool -> 1x1 conv (C -> C/2 + 1)
// -> Relu -> 1x1 conv -> Sigmoid -> s [N,C,1,1]; Mul(xr, s) -> 1x1 conv to M
// channels -> BN (-> Add x) -> "out".
GraphMaker se_block(const Block& b, std::mt19937_64& rng) {
  GraphMaker m;
  const int64_t R = b.C / 2 + 1;
  m.input("x", {b.N, b.C, b.H, b.W}, true);
  m.node("Relu", {"x"}, "xr");
  m.node("GlobalAveragePool", {"xr"}, "pooled");
  m.constant("W1", {R, b.C, 1, 1}, cpu_test::random_floats(size_t(R * b.C), rng()));
  m.node("Conv", {"pooled", "W1"}, "fc1").set_attr_ints("kernel_shape", {1, 1});
  m.node("Relu", {"fc1"}, "fc1r");
  m.constant("W2", {b.C, R, 1, 1}, cpu_test::random_floats(size_t(b.C * R), rng()));
  m.node("Conv", {"fc1r", "W2"}, "fc2").set_attr_ints("kernel_shape", {1, 1});
  m.node("Sigmoid", {"fc2"}, "s");
  m.node("Mul", b.scale_first ? std::vector<std::string>{"s", "xr"} : std::vector<std::string>{"xr", "s"},
         "scaled");
  m.constant("W", {b.M, b.C, 1, 1}, cpu_test::random_floats(size_t(b.M * b.C), rng()));
  frugal::Node& conv = m.node("Conv", {"scaled", "W"}, "y");
  conv.set_attr_ints("kernel_shape", {1, 1});
  if (b.stride != 1) conv.set_attr_ints("strides", {b.stride, b.stride});
  m.batchnorm("y", b.residual ? "bn" : "out", b.M, rng);
  if (b.residual) m.node("Add", {"bn", "x"}, "out");
  m.output("out");
  if (b.second_reader) m.output("scaled");
  return m;
}

bool packed_kernel() {
  const char* isa = std::getenv("FRUGAL_CPU_MAX_ISA");  // CMake's runs with the packed kernel off
  return isa == nullptr || std::string(isa) != "none";
}

// The Mul joins convs to at most 4 blocks of the packed weights (12 rows on AVX-512, 6 on AVX2).
bool joins(int64_t M) {
  const char* isa = std::getenv("FRUGAL_CPU_MAX_ISA");
  const bool avx512 = __builtin_cpu_supports("avx512f") && (isa == nullptr || std::string(isa) == "avx512");
  return packed_kernel() && (M + (avx512 ? 11 : 5)) / (avx512 ? 12 : 6) <= 4;
}

// The layers from the Mul on: joined to the conv, or apart (the residual Add
// joins the conv only on the packed kernel).
std::vector<std::string> tail_layers(const Block& b, bool joined) {
  const std::string add = b.residual ? "+Add" : "";
  if (joined) return {"Conv+Mul+BatchNormalization" + add};
  if (packed_kernel()) return {"Mul", "Conv+BatchNormalization" + add};
  if (b.residual) return {"Mul", "Conv+BatchNormalization", "Add"};
  return {"Mul", "Conv+BatchNormalization"};
}

// The last n layers' ops.
std::vector<std::string> last_layers(const nlohmann::json& describe, size_t n) {
  const std::vector<std::string> ops = layer_ops(describe);
  return std::vector<std::string>(ops.end() - std::ptrdiff_t(std::min(n, ops.size())), ops.end());
}

}  // namespace

TEST_CASE("A squeeze-and-excite Mul joins the 1x1 conv after it and matches the float64 reference",
          "[cpu][se]") {
  std::mt19937_64 rng(91);
  // Planes of 8x8 (64 columns: two full vectors), 5x7 (35: two vectors and 3
  // columns in lanes), 3x3 (9: one masked vector), 28x28 (several panels);
  // channel counts that make uneven blocks of the packed weights, and 64 (more
  // blocks than the join takes: apart).
  const struct {
    int64_t C, M, H, W;
  } shapes[] = {{16, 16, 8, 8}, {24, 13, 5, 7}, {7, 30, 3, 3}, {40, 40, 28, 28}, {20, 64, 6, 6}};
  for (const auto& sh : shapes)
    for (bool scale_first : {false, true})
      for (int64_t N : {1, 3}) {
        Block b;
        b.N = N;
        b.C = sh.C;
        b.M = sh.M;
        b.H = sh.H;
        b.W = sh.W;
        b.scale_first = scale_first;
        b.residual = sh.C == sh.M;
        INFO("C " << b.C << " -> M " << b.M << ", " << b.H << "x" << b.W << ", Mul("
                  << (scale_first ? "s, x" : "x, s") << "), batch " << N);
        GraphMaker m = se_block(b, rng);
        for (const cpu_test::ReferenceRun& r :
             cpu_test::check_against_reference(m.graph(), {N, b.C, b.H, b.W}, rng, 1e-5)) {
          const std::vector<std::string> tail = tail_layers(b, joins(b.M));
          CHECK(last_layers(r.describe, tail.size()) == tail);
          CHECK(layer_ops(r.describe).size() == 4 + tail.size());  // Relu, GAP, fc1, fc2, then those
        }
        // Apart on request: the same values.
        for (const cpu_test::ReferenceRun& r : cpu_test::check_against_reference(
                 m.graph(), {N, b.C, b.H, b.W}, rng, 1e-5, ", \"se_scale\": \"separate\""))
          CHECK(last_layers(r.describe, tail_layers(b, false).size()) == tail_layers(b, false));
      }
}

TEST_CASE("The joined scale gives the separate Mul's values bit for bit", "[cpu][se]") {
  std::mt19937_64 rng(92);
  Block b;
  b.N = 3;
  b.C = 24;
  b.M = 24;
  b.H = 9;
  b.W = 11;
  b.residual = true;
  GraphMaker m = se_block(b, rng);
  for (int threads : {1, 2}) {
    INFO(threads << " threads");
    const std::string t = "{\"threads\": " + std::to_string(threads);
    cpu_test::Executor joined(m.graph(), t + "}"), apart(m.graph(), t + ", \"se_scale\": \"separate\"}");
    REQUIRE(joined.ok());
    REQUIRE(apart.ok());
    const std::vector<exec_test::HostTensor> in = exec_test::random_inputs(joined.describe(), b.N, 17);
    std::vector<exec_test::HostTensor> y1, y2;
    REQUIRE(joined.run(in, y1).ok());
    REQUIRE(apart.run(in, y2).ok());
    REQUIRE(y1.size() == 1);
    CHECK(y1[0].data == y2[0].data);
  }
}

TEST_CASE("A Mul stays apart where its product has another reader, the conv is strided or the plane is small",
          "[cpu][se]") {
  std::mt19937_64 rng(93);
  Block read_twice;
  read_twice.second_reader = true;
  Block strided;
  strided.stride = 2;
  Block small;  // 2x3 = 6 columns: the packed tile leaves such planes to sgemm
  small.H = 2;
  small.W = 3;
  for (const Block& b : {read_twice, strided, small}) {
    INFO("second reader " << b.second_reader << ", stride " << b.stride << ", " << b.H << "x" << b.W);
    GraphMaker m = se_block(b, rng);
    cpu_test::Executor ex(m.graph(), "{\"threads\": 1}");
    REQUIRE(ex.ok());
    const std::vector<std::string> ops = layer_ops(ex.describe());
    REQUIRE(ops.size() >= 2);
    CHECK(ops[ops.size() - 2] == "Mul");
    CHECK(ops.back() == "Conv+BatchNormalization");
  }
  cpu_test::Executor bad(se_block(Block{}, rng).graph(), "{\"se_scale\": \"yes\"}");
  CHECK_FALSE(bad.ok());
  CHECK_THAT(bad.created.message, Catch::Contains("se_scale"));
}
