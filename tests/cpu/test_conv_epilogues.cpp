// Convs whose epilogue runs in registers on the cpu executor, against the
// float64 reference evaluator. First the packed 1x1 conv kernel
// (plugins/cpu/kernels/conv_1x1.h):
// random channel counts (blocks of output channels of every size, several of
// them per thread), planes whose width is no multiple of the tile's columns
// (masked last vector), thin convs that run in chunks of rows, and every
// epilogue step in registers (bias, BatchNormalization, Relu, Clip, Sigmoid,
// HardSigmoid, HardSwish, LeakyRelu, Swish), at 1 and 2 threads and batches 1
// and 3. CMake runs it again with FRUGAL_CPU_MAX_ISA=avx2 (and =none: the
// sgemm path) so that each instruction set's tiles are checked on a machine
// that has AVX-512. Then the depthwise 3x3 and 5x5 convs at stride 1 and 2
// (kernels/conv_depthwise.h: strips on AVX-512; the padded plane and the direct
// 3x3/2 pass, AVX2's, there again with FRUGAL_CPU_DW_STRIPS=0)
// with the same epilogues, and
// convs with a short K (RGB stems) on im2col chunks and the packed tile.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <random>
#include <sstream>
#include <string>

#include "cpu_plugin.h"
#include "graph_helpers.h"
#include "reference.h"

using cpu_test::GraphMaker;
using cpu_test::HostTensor;
using cpu_test::numel;

namespace {

// The packed and depthwise kernels' AVX-512 forms run: the CPU has them and
// FRUGAL_CPU_MAX_ISA (the avx2 / none test variants) does not lower it.
bool avx512_kernels() {
  const char* isa = std::getenv("FRUGAL_CPU_MAX_ISA");
  return __builtin_cpu_supports("avx512f") && !(isa && std::string(isa) != "avx512");
}

// The depthwise strips (kernels/conv_depthwise.h) run: AVX-512 kernels, and
// FRUGAL_CPU_DW_STRIPS (the no_strips test variant) does not switch them off.
bool dw_strips() {
  const char* v = std::getenv("FRUGAL_CPU_DW_STRIPS");
  return avx512_kernels() && !(v && std::string(v) == "0");
}

// The epilogue after the conv: what follows it in the graph.
enum class Tail {
  None,
  Bias,
  BnRelu,
  Clip,
  Sigmoid,
  HardSigmoid,
  HardSwish,
  LeakyRelu,
  Swish,
  BiasBnSwish,
  BnClip
};

// Every tail in enum order; the older cases cycle through the first ten (all but BnClip).
constexpr Tail kEveryTail[] = {Tail::None,    Tail::Bias,        Tail::BnRelu,    Tail::Clip,
                               Tail::Sigmoid, Tail::HardSigmoid, Tail::HardSwish, Tail::LeakyRelu,
                               Tail::Swish,   Tail::BiasBnSwish, Tail::BnClip};

const char* tail_name(Tail t) {
  switch (t) {
    case Tail::None:
      return "none";
    case Tail::Bias:
      return "bias";
    case Tail::BnRelu:
      return "BN+Relu";
    case Tail::Clip:
      return "Clip";
    case Tail::Sigmoid:
      return "Sigmoid";
    case Tail::HardSigmoid:
      return "HardSigmoid";
    case Tail::HardSwish:
      return "HardSwish";
    case Tail::LeakyRelu:
      return "LeakyRelu";
    case Tail::Swish:
      return "Swish";
    case Tail::BiasBnSwish:
      return "bias+BN+Swish";
    case Tail::BnClip:
      return "BN+Clip";
  }
  return "?";
}

// Whether the depthwise kernels compile `tail` as such (nothing, bias, BN +
// Relu, BN + Clip: epi_form's forms but Swish); a stride-2 conv to planes at
// most 8 wide takes the strips then, the channel-interleaved path otherwise.
bool light_tail(Tail t) {
  return t == Tail::None || t == Tail::Bias || t == Tail::BnRelu || t == Tail::BnClip;
}

// The path a depthwise k x k conv at stride s padded by k / 2 at the top and
// left to planes Wo wide takes (kernels/conv_depthwise.h).
std::string depthwise_path(int64_t k, int64_t s, int64_t Wo, Tail tail) {
  if (Wo <= 8)
    return dw_strips() && s == 2 && light_tail(tail) ? "depthwise strips" : "depthwise interleaved";
  if (dw_strips()) return "depthwise strips";
  return k == 3 && s == 2 ? "depthwise direct" : "depthwise padded";
}

// A k x k conv (stride s, pads k / 2 or `pad`, or `pads` (top, left, bottom,
// right) when given, `group` groups) followed by `tail`.
GraphMaker conv_with_tail(int64_t N, int64_t C, int64_t M, int64_t H, int64_t W, Tail tail,
                          std::mt19937_64& rng, int64_t k = 1, int64_t s = 1, int64_t group = 1,
                          int64_t pad = -1, std::vector<int64_t> pads = {}) {
  if (pad < 0) pad = k / 2;
  GraphMaker m;
  m.input("x", {N, C, H, W}, true);
  const std::vector<int64_t> wd = {M, C / group, k, k};
  // Weights scaled by 1/sqrt(fan-in): outputs of order 1, where the activations bend.
  std::vector<float> w = cpu_test::random_floats(size_t(numel(wd)), rng());
  for (float& v : w) v *= float(2.0 / std::sqrt(double(C / group * k * k)));
  m.constant("W", wd, w);
  std::vector<std::string> ins = {"x", "W"};
  const bool bias = tail == Tail::Bias || tail == Tail::BiasBnSwish;
  if (bias) {
    m.constant("B", {M}, cpu_test::random_floats(size_t(M), rng()));
    ins.push_back("B");
  }
  frugal::Node& n = m.node("Conv", ins, "y");
  n.set_attr_ints("kernel_shape", {k, k});
  n.set_attr_ints("strides", {s, s});
  n.set_attr_ints("pads", pads.empty() ? std::vector<int64_t>{pad, pad, pad, pad} : pads);
  n.set_attr_int("group", group);
  std::string last = "y";
  if (tail == Tail::BnRelu || tail == Tail::BiasBnSwish || tail == Tail::BnClip) {
    m.batchnorm("y", "bn", M, rng);
    last = "bn";
  }
  switch (tail) {
    case Tail::BnRelu:
      m.node("Relu", {last}, "out");
      break;
    case Tail::Clip:
    case Tail::BnClip:
      m.constant("lo", {}, {-0.25f});
      m.constant("hi", {}, {0.5f});
      m.node("Clip", {last, "lo", "hi"}, "out");
      break;
    case Tail::Sigmoid:
      m.node("Sigmoid", {last}, "out");
      break;
    case Tail::HardSigmoid: {
      frugal::Node& c = m.node("HardSigmoid", {last}, "out");
      c.set_attr_float("alpha", 0.3f);
      c.set_attr_float("beta", 0.4f);
      break;
    }
    case Tail::HardSwish:
      m.node("HardSwish", {last}, "out");
      break;
    case Tail::LeakyRelu: {
      frugal::Node& c = m.node("LeakyRelu", {last}, "out");
      c.set_attr_float("alpha", 0.1f);
      break;
    }
    case Tail::Swish:
    case Tail::BiasBnSwish:
      m.node("Sigmoid", {last}, "s");
      m.node("Mul", {last, "s"}, "out");
      break;
    default:
      m.node("Identity", {last}, "out");
      break;
  }
  m.output("out");
  return m;
}

// The algorithm of the only layer of a run.
std::string algorithm_of(const cpu_test::ReferenceRun& r) {
  REQUIRE(r.describe["layers"].size() == 1);
  return r.describe["layers"][0]["algorithm"].get<std::string>();
}

}  // namespace

TEST_CASE("1x1 convs on the packed kernel, epilogue in registers, match the float64 reference",
          "[cpu][conv]") {
  const char* isa_env = std::getenv("FRUGAL_CPU_MAX_ISA");
  const bool sgemm_only = isa_env && std::string(isa_env) == "none";
  std::mt19937_64 rng(20261126);
  auto pick = [&](int64_t lo, int64_t hi) { return lo + int64_t(rng() % uint64_t(hi - lo + 1)); };
  int packed = 0;
  for (int t = 0; t < 20; ++t) {
    const Tail tail = kEveryTail[t % 10];
    // Channel counts around the block sizes (6, 12) and wider; planes from 3x3
    // (one masked vector) to 30x31 (many panels, thin convs in chunks).
    const int64_t C = t < 10 ? pick(1, 40) : pick(40, 300), M = t % 3 == 0 ? pick(1, 13) : pick(14, 150);
    const int64_t H = pick(3, 31), W = pick(3, 31), N = t % 2 == 0 ? 1 : 3;
    std::ostringstream what;
    what << "Conv 1x1 x=[" << N << "," << C << "," << H << "," << W << "] M " << M << " epilogue "
         << tail_name(tail) << (isa_env ? std::string(" FRUGAL_CPU_MAX_ISA=") + isa_env : "");
    INFO(what.str());
    GraphMaker m = conv_with_tail(N, C, M, H, W, tail, rng);
    for (const cpu_test::ReferenceRun& r :
         cpu_test::check_against_reference(m.graph(), {N, C, H, W}, rng, 1e-5)) {
      const std::string algo = algorithm_of(r);
      INFO("threads " << r.threads << ", algorithm " << algo);
      if (sgemm_only) CHECK(algo.find("packed") == std::string::npos);
      packed += algo.find("packed") != std::string::npos;
      CHECK(r.ws_bytes == 0);  // no workspace on either path
    }
  }
  // On x86-64 with AVX2 (every CI machine) the packed kernel ran unless it was switched off.
  if (!sgemm_only && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) CHECK(packed == 40);
}

TEST_CASE("stems and strided 1x1 convs on im2col and the packed tile match the float64 reference",
          "[cpu][conv]") {
  // K = C k k up to 32 (3x3 on 1 to 3 channels, 5x5 on one): strides 1 and 2,
  // padded or not, output channels in blocks of every size, planes whose
  // width is no multiple of the tile's columns, and planes large enough to
  // run in several chunks of rows (split over the threads at batch 1).
  // On AVX-512 only (on AVX2 oneDNN's kernel was the faster).
  const char* isa_env = std::getenv("FRUGAL_CPU_MAX_ISA");
  const bool packed_isa = avx512_kernels();
  std::mt19937_64 rng(20261127);
  auto pick = [&](int64_t lo, int64_t hi) { return lo + int64_t(rng() % uint64_t(hi - lo + 1)); };
  int chunked = 0;
  for (int t = 0; t < 16; ++t) {
    const Tail tail = kEveryTail[t % 11];
    const int64_t k = t % 5 == 4 ? 5 : 3, C = k == 5 ? 1 : pick(1, 3), s = t % 2 == 0 ? 2 : 1;
    const int64_t pad = t % 3 == 0 ? 0 : k / 2, M = t % 4 == 0 ? pick(1, 13) : pick(14, 70);
    const bool large = t % 4 == 1;  // over 2 x 96K floats of im2col + output: several chunks
    const int64_t H = large ? pick(100, 130) * s : pick(9, 40), W = large ? pick(100, 130) * s : pick(9, 40);
    const int64_t N = t % 3 == 1 ? 3 : 1;
    INFO("Conv " << k << "x" << k << " s" << s << " pads " << pad << " x=[" << N << "," << C << "," << H
                 << "," << W << "] M " << M << " epilogue " << tail_name(tail)
                 << (isa_env ? std::string(" FRUGAL_CPU_MAX_ISA=") + isa_env : ""));
    GraphMaker m = conv_with_tail(N, C, M, H, W, tail, rng, k, s, 1, pad);
    for (const cpu_test::ReferenceRun& r :
         cpu_test::check_against_reference(m.graph(), {N, C, H, W}, rng, 1e-5)) {
      const std::string algo = algorithm_of(r);
      INFO("threads " << r.threads << ", algorithm " << algo);
      CHECK((algo.rfind("im2col + 1x1 packed", 0) == 0) == packed_isa);
      chunked += large;
    }
  }
  CHECK(chunked == 8);
  // Strided unpadded 1x1 convs (any K) take it too, on a subsampled copy of the input.
  for (int t = 0; t < 6; ++t) {
    const Tail tail = kEveryTail[(t * 3) % 11];
    const int64_t C = pick(20, 300), M = pick(1, 90), H = pick(5, 40), W = pick(5, 40), s = 2 + t % 2;
    INFO("Conv 1x1 s" << s << " x=[1," << C << "," << H << "," << W << "] M " << M << " epilogue "
                      << tail_name(tail));
    GraphMaker m = conv_with_tail(1, C, M, H, W, tail, rng, 1, s);
    for (const cpu_test::ReferenceRun& r :
         cpu_test::check_against_reference(m.graph(), {1, C, H, W}, rng, 1e-5))
      CHECK((algorithm_of(r).rfind("im2col + 1x1 packed", 0) == 0) == packed_isa);
  }
  // A 7x7 stem (K = 147) keeps its earlier path: oneDNN's kernel is the faster there.
  GraphMaker m = conv_with_tail(1, 3, 16, 40, 40, Tail::BnRelu, rng, 7, 2);
  for (const cpu_test::ReferenceRun& r :
       cpu_test::check_against_reference(m.graph(), {1, 3, 40, 40}, rng, 1e-5))
    CHECK(algorithm_of(r).find("packed") == std::string::npos);
}

TEST_CASE("1x1 convs whose planes end in a few columns (rows in the lanes) match the float64 reference",
          "[cpu][conv]") {
  // The last columns of a plane that fill less than a vector go through the
  // lane tile when they are at most half the block's rows: 7x7 (49 = 3 x 16 + 1
  // on AVX-512, 6 x 8 + 1 on AVX2), 14x14 (196: 4 left on AVX-512), 3x3 (9: 1
  // on AVX2, 9 on AVX-512: the masked vector), 2x10 (20: 4 left), 5x5;
  // output channels in blocks of every size from 1 to 12 (M = 1, 5, 12, 13,
  // 24, 40) and every epilogue, the affine step per lane.
  const char* isa_env = std::getenv("FRUGAL_CPU_MAX_ISA");
  std::mt19937_64 rng(20261127);
  const int64_t planes[][2] = {{7, 7}, {14, 14}, {3, 3}, {2, 10}, {5, 5}};
  const bool packed_kernel = !(isa_env && std::string(isa_env) == "none") && __builtin_cpu_supports("avx2") &&
                             __builtin_cpu_supports("fma");
  const int64_t channels[] = {1, 5, 12, 13, 24, 40};
  int t = 0;
  for (const auto& hw : planes)
    for (int64_t M : channels) {
      const Tail tail = kEveryTail[t % 10];
      const int64_t C = 3 + (t * 37) % 90, N = t % 2 == 0 ? 1 : 3;
      ++t;
      std::ostringstream what;
      what << "Conv 1x1 x=[" << N << "," << C << "," << hw[0] << "," << hw[1] << "] M " << M << " epilogue "
           << tail_name(tail) << (isa_env ? std::string(" FRUGAL_CPU_MAX_ISA=") + isa_env : "");
      INFO(what.str());
      GraphMaker m = conv_with_tail(N, C, M, hw[0], hw[1], tail, rng);
      for (const cpu_test::ReferenceRun& r :
           cpu_test::check_against_reference(m.graph(), {N, C, hw[0], hw[1]}, rng, 1e-5)) {
        INFO("threads " << r.threads << ", algorithm " << algorithm_of(r));
        CHECK(r.ws_bytes == 0);
        if (packed_kernel) CHECK(algorithm_of(r).find("packed") != std::string::npos);
      }
    }
}

TEST_CASE(
    "depthwise convs in strips or on the padded plane, epilogue in registers, match the float64 "
    "reference",
    "[cpu][conv]") {
  std::mt19937_64 rng(7081);
  auto pick = [&](int64_t lo, int64_t hi) { return lo + int64_t(rng() % uint64_t(hi - lo + 1)); };
  int padded = 0, interleaved = 0, strips = 0;
  for (int t = 0; t < 20; ++t) {
    const Tail tail = kEveryTail[t % 10];
    // 3x3 at stride 1 and 5x5 at stride 1 and 2 take the padded plane; 3x3 at
    // stride 2 the direct pass (epilogue as its own step), checked alike; any
    // of them with output planes at most 8 wide 16 channels in the lanes.
    const int64_t k = t % 4 < 2 ? 5 : 3, s = t % 2 == 0 ? 1 : 2;
    const int64_t C = pick(1, 40), H = pick(3, 30), W = pick(3, 30), N = t % 3 == 0 ? 3 : 1;
    INFO("depthwise " << k << "x" << k << " s" << s << " x=[" << N << "," << C << "," << H << "," << W
                      << "] epilogue " << tail_name(tail));
    GraphMaker m = conv_with_tail(N, C, C, H, W, tail, rng, k, s, C);
    for (const cpu_test::ReferenceRun& r :
         cpu_test::check_against_reference(m.graph(), {N, C, H, W}, rng, 1e-5, ", \"conv\": \"blas\"")) {
      const std::string algo = algorithm_of(r);
      const int64_t Wo = (W + 2 * (k / 2) - k) / s + 1;
      CHECK(algo == depthwise_path(k, s, Wo, tail));
      padded += algo == "depthwise padded" || (algo == "depthwise interleaved" && !(k == 3 && s == 2));
      interleaved += algo == "depthwise interleaved";
      strips += algo == "depthwise strips";
    }
  }
  if (!dw_strips()) CHECK(padded == 30);  // 3x3 s1, 5x5 s1 and s2: 15 cases, 2 thread counts
  CHECK(interleaved > 0);
  CHECK((strips > 0) == dw_strips());
}

TEST_CASE(
    "depthwise convs on wide planes (two rows at a time, 3x3 stride-2 runs of 16) match the float64 "
    "reference",
    "[cpu][conv]") {
  // The padded path computes two output rows per pass and each epilogue form
  // (nothing, BN, BN + Relu, BN + Clip, BN + Swish, others) in its own
  // kernel; 3x3 at stride 2 takes runs of 16 outputs from shuffled loads
  // where the row holds their inputs, the rest column by column. Planes of
  // odd and even heights, widths ending mid-run and on a run.
  std::mt19937_64 rng(9127);
  auto pick = [&](int64_t lo, int64_t hi) { return lo + int64_t(rng() % uint64_t(hi - lo + 1)); };
  for (int t = 0; t < 22; ++t) {
    const Tail tail = kEveryTail[t % 11];
    const int64_t k = t % 4 < 2 ? 3 : 5, s = t % 2 == 0 ? 1 : 2;
    const int64_t C = pick(2, 12), H = pick(9, 40), W = t % 5 == 0 ? 16 * s * pick(2, 4) : pick(34, 120);
    const int64_t N = t % 3 == 0 ? 2 : 1;
    INFO("depthwise " << k << "x" << k << " s" << s << " x=[" << N << "," << C << "," << H << "," << W
                      << "] epilogue " << tail_name(tail));
    GraphMaker m = conv_with_tail(N, C, C, H, W, tail, rng, k, s, C);
    for (const cpu_test::ReferenceRun& r :
         cpu_test::check_against_reference(m.graph(), {N, C, H, W}, rng, 1e-5, ", \"conv\": \"blas\"")) {
      CHECK(algorithm_of(r) == depthwise_path(k, s, (W - 1) / s + 1, tail));
    }
  }
}

TEST_CASE(
    "depthwise 3x3 and 5x5 stride-1 convs on planes 9 to 32 wide match the float64 "
    "reference",
    "[cpu][conv]") {
  // One or two vectors per row, the masked lanes at every width from a row
  // that ends mid-vector to one that fills both; planes of one, two and more
  // rows (the padding rows above and below, two of them for 5x5); every
  // epilogue form.
  std::mt19937_64 rng(4409);
  const int64_t widths[] = {9, 14, 15, 16, 17, 28, 31, 32};
  const int64_t heights[] = {1, 2, 3, 14};
  int t = 0;
  for (int64_t k : {3, 5})
    for (int64_t W : widths)
      for (int64_t H : heights) {
        const Tail tail = kEveryTail[t % 11];
        const int64_t C = 2 + (t * 7) % 19, N = t % 3 == 0 ? 2 : 1;  // one channel would be a dense conv
        ++t;
        INFO("depthwise " << k << "x" << k << " s1 x=[" << N << "," << C << "," << H << "," << W
                          << "] epilogue " << tail_name(tail));
        GraphMaker m = conv_with_tail(N, C, C, H, W, tail, rng, k, 1, C);
        for (const cpu_test::ReferenceRun& r :
             cpu_test::check_against_reference(m.graph(), {N, C, H, W}, rng, 1e-5, ", \"conv\": \"blas\"")) {
          INFO("threads " << r.threads);
          if (dw_strips()) {
            CHECK(algorithm_of(r) == "depthwise strips");
            CHECK(r.ws_bytes == 0);  // no padded copy
          } else {
            CHECK(algorithm_of(r) == (W <= 8 ? "depthwise interleaved" : "depthwise padded"));
          }
        }
      }
}

TEST_CASE("depthwise 3x3 and 5x5 convs in strips of 16 columns (no padded copy) match the float64 reference",
          "[cpu][conv]") {
  // kernels/conv_depthwise.h's strips on AVX-512 (the rows-in-registers,
  // padded and direct paths otherwise, and under FRUGAL_CPU_DW_STRIPS=0):
  // stride 1 and 2, rows that end mid-vector, on a vector, one column past
  // it, across several strips; odd input widths and heights at stride 2 (the
  // last output's right and bottom taps in the padding or not); planes of 1
  // to 12 rows (padding rows above and below, two of them for 5x5); stride-2
  // outputs at most 8 wide (strips under the compiled epilogues, 16 channels
  // in the lanes under the others); bottom and right pads of 0 to k / 2 + 1;
  // a channel multiplier of 2; every epilogue form; batches 1 and 2.
  std::mt19937_64 rng(6151);
  const int64_t widths1[] = {9, 15, 16, 17, 31, 33, 47, 48, 50, 77};
  const int64_t widths2[] = {5, 13, 14, 15, 17, 31, 32, 33, 34, 63, 65, 67};
  const int64_t heights[] = {1, 2, 3, 4, 7, 12, 5, 9};
  int t = 0, strips = 0;
  for (int64_t k : {3, 5})
    for (int64_t s : {1, 2})
      for (int64_t W : s == 1 ? std::vector<int64_t>(std::begin(widths1), std::end(widths1))
                              : std::vector<int64_t>(std::begin(widths2), std::end(widths2))) {
        const Tail tail = kEveryTail[t % 11];
        const int64_t H = std::max(heights[t % 8], s == 2 ? W % 7 + 3 : 1);
        const int64_t C = 2 + (t * 5) % 13, mult = t % 4 == 3 ? 2 : 1, N = t % 3 == 0 ? 2 : 1;
        const int64_t h = k / 2, pb = t % 5 == 1 ? (t / 5) % (h + 2) : h,
                      pr = t % 5 == 2 ? (t / 5) % (h + 2) : h;
        ++t;
        if (H + h + pb < k || W + h + pr < k) continue;
        const int64_t Wo = (W + h + pr - k) / s + 1;
        INFO("depthwise " << k << "x" << k << " s" << s << " x=[" << N << "," << C << "," << H << "," << W
                          << "] pads " << h << "," << h << "," << pb << "," << pr << " mult " << mult
                          << " epilogue " << tail_name(tail));
        GraphMaker m = conv_with_tail(N, C, C * mult, H, W, tail, rng, k, s, C, -1, {h, h, pb, pr});
        for (const cpu_test::ReferenceRun& r :
             cpu_test::check_against_reference(m.graph(), {N, C, H, W}, rng, 1e-5, ", \"conv\": \"blas\"")) {
          INFO("threads " << r.threads);
          const std::string algo = algorithm_of(r);
          CHECK(algo == depthwise_path(k, s, Wo, tail));
          if (algo == "depthwise strips") CHECK(r.ws_bytes == 0);
          strips += algo == "depthwise strips";
        }
      }
  CHECK((strips > 0) == dw_strips());
}

TEST_CASE("1x1 convs on one-value planes (squeeze-and-excite) take the packed weights, samples as rows",
          "[cpu][conv]") {
  // Conv1x1::run_rows: output channels in the lanes, blocks of every size,
  // 1 to 19 samples (groups of 8 rows and a remainder), every epilogue.
  std::mt19937_64 rng(5303);
  auto pick = [&](int64_t lo, int64_t hi) { return lo + int64_t(rng() % uint64_t(hi - lo + 1)); };
  const char* isa_env = std::getenv("FRUGAL_CPU_MAX_ISA");
  const bool packed = !(isa_env && std::string(isa_env) == "none");
  for (int t = 0; t < 22; ++t) {
    const Tail tail = kEveryTail[t % 11];
    const int64_t C = pick(1, 200), M = pick(1, 120), N = t % 4 == 0 ? pick(9, 19) : pick(1, 3);
    INFO("1x1 on [" << N << "," << C << ",1,1] -> " << M << " epilogue " << tail_name(tail));
    GraphMaker m = conv_with_tail(N, C, M, 1, 1, tail, rng);
    for (const cpu_test::ReferenceRun& r :
         cpu_test::check_against_reference(m.graph(), {N, C, 1, 1}, rng, 1e-5)) {
      INFO("threads " << r.threads << ", algorithm " << algorithm_of(r));
      CHECK(r.ws_bytes == 0);
      CHECK((algorithm_of(r).find("samples as rows") != std::string::npos) == packed);
    }
  }
}
