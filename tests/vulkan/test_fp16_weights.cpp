// Conv kernels stored as fp16 (option "weight_storage": "fp16"; docs/VULKAN.md,
// "fp16 weights"), against the float64 reference evaluator with the validation
// layer on:
// - the host's conversion (ties to even, subnormals, the range);
// - weights that fp16 holds exactly (rounded to halves in the model first):
//   the fp16 kernels must then give the reference's results with the fp32
//   tests' own tolerance, |d| <= 1e-4 + 1e-3 |ref|, on the tile cases of
//   test_kernels.cpp (odd and short reductions, kernel counts off the tiles,
//   strides, dilations, pads, long steps, split-K, the dense path) and on a
//   gated model (the active lists and a consumer's skipped channels), so a
//   half read from the wrong place cannot hide in a tolerance;
// - any weights: the stored value w' of a weight w has |w' - w| <= u |w| +
//   2^-25 (u = 2^-11, fp16's unit roundoff; 2^-25 half its smallest
//   subnormal), so each output may differ from the reference by at most its
//   first-order sum over the reduction, on top of the fp32 tolerance:
//     direct conv:   sum_k (u |w_k| + 2^-25) |x_k|
//     Winograd F(R): sum_c sum_pq |A_ip| |A_jq| (u |U_pq| + 2^-25) |V_pq|
//   (U = G g G^T the stored kernels, V = B^T d B the transformed input, A the
//   output transform, all as winograd.comp computes them), times the
//   epilogue's slope (1 for bias, Relu and Clip);
// - the accounting: the kernels take half the bytes of the weights buffer,
//   the arena (activations, fp32) is the same; bad values are refused.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>

#include "gated_graphs.h"
#include "vk_half.h"
#include "vk_test_util.h"

using Catch::Matchers::Contains;
using frugal::vk::half_bits;
using frugal::vk::half_value;
using vk_test::GraphMaker;

namespace {

constexpr double kUnit = 1.0 / 2048.0;         // u = 2^-11
constexpr double kSubnormal = 1.0 / 33554432;  // 2^-25

struct ConvCase {
  int64_t C, M, H, W, k, s, d;
  std::vector<int64_t> pads;  // top, left, bottom, right
  int64_t Ho() const { return (H + pads[0] + pads[2] - d * (k - 1) - 1) / s + 1; }
  int64_t Wo() const { return (W + pads[1] + pads[3] - d * (k - 1) - 1) / s + 1; }
};

// x -> Conv(w, b) [-> Relu] -> y; weights rounded to halves first when `exact`.
frugal::Graph conv_graph(const ConvCase& t, bool relu, bool exact) {
  GraphMaker m;
  m.input("x", {-1, t.C, t.H, t.W});
  m.conv("x", "conv.out", t.C, t.M, t.k, t.s, t.d, t.pads);
  std::string y = "conv.out";
  if (relu) {
    m.node("Relu", "relu", {y}, {"relu.out"});
    y = "relu.out";
  }
  m.output(y);
  if (exact) {
    frugal::TensorDesc& w = m.g.tensors.at("w");
    float* v = w.f32();
    for (size_t i = 0; i < w.data.size() / 4; ++i) v[i] = half_value(half_bits(v[i]));
  }
  return m.g;
}

// An initializer's values rounded to halves (so that fp16 storage holds them exactly).
void round_to_halves(frugal::Graph& g, const std::string& name) {
  frugal::TensorDesc& w = g.tensors.at(name);
  float* v = w.f32();
  for (size_t i = 0; i < w.data.size() / 4; ++i) v[i] = half_value(half_bits(v[i]));
}

// Every Conv's kernels and Gemm's B rounded to halves.
void round_conv_weights(frugal::Graph& g) {
  for (const frugal::Node& n : g.nodes)
    if (n.op_type == "Conv" || n.op_type == "Gemm") round_to_halves(g, n.inputs[1]);
}

// x [n, K] -> Gemm(B [N, K] with transB, else [K, N]; bias) -> Relu.
frugal::Graph gemm_graph(int64_t K, int64_t N, bool transB) {
  GraphMaker m;
  m.input("x", {-1, K});
  const std::vector<int64_t> wd = transB ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N};
  m.node("Gemm", "gemm", {"x", m.weight("w", wd), m.weight("c", {N})}, {"g"}).set_attr_int("transB", transB);
  m.node("Relu", "relu", {"g"}, {"y"});
  m.output("y");
  return m.g;
}

// The first-order bound of the direct conv, per output [n][m][oh][ow].
std::vector<double> direct_bound(const ConvCase& t, const std::vector<float>& w, const frugal::RefTensor& x) {
  const int64_t N = x.dims[0], Ho = t.Ho(), Wo = t.Wo();
  std::vector<double> b(size_t(N * t.M * Ho * Wo), 0.0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t m = 0; m < t.M; ++m)
      for (int64_t oh = 0; oh < Ho; ++oh)
        for (int64_t ow = 0; ow < Wo; ++ow) {
          double s = 0;
          for (int64_t c = 0; c < t.C; ++c)
            for (int64_t a = 0; a < t.k; ++a)
              for (int64_t e = 0; e < t.k; ++e) {
                const int64_t ih = oh * t.s + a * t.d - t.pads[0], iw = ow * t.s + e * t.d - t.pads[1];
                if (ih < 0 || ih >= t.H || iw < 0 || iw >= t.W) continue;
                const double wv = w[size_t(((m * t.C + c) * t.k + a) * t.k + e)];
                s += (kUnit * std::fabs(wv) + kSubnormal) *
                     std::fabs(x.data[size_t(((n * t.C + c) * t.H + ih) * t.W + iw)]);
              }
          b[size_t(((n * t.M + m) * Ho + oh) * Wo + ow)] = s;
        }
  return b;
}

// Winograd F(R x R, 3 x 3) as winograd.comp and kernels/conv.cpp compute it:
// G (N x 3), B^T (N x N), A^T (R x N).
struct WinogradMatrices {
  int64_t R, N;
  std::vector<double> G, BT, AT;
};

WinogradMatrices winograd_matrices(int64_t R) {
  if (R == 2)
    return {2,
            4,
            {1, 0, 0, 0.5, 0.5, 0.5, 0.5, -0.5, 0.5, 0, 0, 1},
            {1, 0, -1, 0, 0, 1, 1, 0, 0, -1, 1, 0, 0, 1, 0, -1},
            {1, 1, 1, 0, 0, 1, -1, -1}};
  return {4,
          6,
          {1.0 / 4, 0, 0, -1.0 / 6, -1.0 / 6, -1.0 / 6, -1.0 / 6, 1.0 / 6, -1.0 / 6, 1.0 / 24, 1.0 / 12,
           1.0 / 6, 1.0 / 24, -1.0 / 12, 1.0 / 6, 0, 0, 1},
          {4, 0,  -5, 0, 1, 0, 0, -4, -4, 1,  1, 0, 0, 4, -4, -1, 1, 0,
           0, -2, -1, 2, 1, 0, 0, 2,  -1, -2, 1, 0, 0, 4, 0,  -5, 0, 1},
          {1, 1, 1, 1, 1, 0, 0, 1, -1, 2, -2, 0, 0, 1, 1, 4, 4, 0, 0, 1, -1, 8, -8, 1}};
}

// L Z L^T for an n x n Z and an r x n L (row-major).
std::vector<double> sandwich(const std::vector<double>& L, int64_t r, int64_t n,
                             const std::vector<double>& Z) {
  std::vector<double> t(size_t(r * n), 0.0), out(size_t(r * r), 0.0);
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < n; ++j)
      for (int64_t k = 0; k < n; ++k) t[size_t(i * n + j)] += L[size_t(i * n + k)] * Z[size_t(k * n + j)];
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < r; ++j)
      for (int64_t k = 0; k < n; ++k) out[size_t(i * r + j)] += t[size_t(i * n + k)] * L[size_t(j * n + k)];
  return out;
}

// The first-order bound of a Winograd conv (3x3, stride 1), per output.
std::vector<double> winograd_bound(const ConvCase& t, int64_t R, const std::vector<float>& w,
                                   const frugal::RefTensor& x) {
  const WinogradMatrices mt = winograd_matrices(R);
  const int64_t N = mt.N, P = N * N, n_samples = x.dims[0], Ho = t.Ho(), Wo = t.Wo();
  const int64_t TH = (Ho + R - 1) / R, TW = (Wo + R - 1) / R;
  std::vector<double> U(size_t(t.M * t.C * P));  // |U| = |G g G^T|, stored fp16
  for (int64_t m = 0; m < t.M; ++m)
    for (int64_t c = 0; c < t.C; ++c) {
      std::vector<double> g(9);
      for (int64_t i = 0; i < 9; ++i) g[size_t(i)] = w[size_t((m * t.C + c) * 9 + i)];
      // G g G^T: G is N x 3, so pad g to the sandwich's square form through G's transpose.
      std::vector<double> Gg(size_t(N * 3), 0.0), u(size_t(P), 0.0);
      for (int64_t i = 0; i < N; ++i)
        for (int64_t l = 0; l < 3; ++l)
          for (int64_t k = 0; k < 3; ++k)
            Gg[size_t(i * 3 + l)] += mt.G[size_t(i * 3 + k)] * g[size_t(k * 3 + l)];
      for (int64_t i = 0; i < N; ++i)
        for (int64_t j = 0; j < N; ++j)
          for (int64_t l = 0; l < 3; ++l)
            u[size_t(i * N + j)] += Gg[size_t(i * 3 + l)] * mt.G[size_t(j * 3 + l)];
      for (int64_t p = 0; p < P; ++p) U[size_t((m * t.C + c) * P + p)] = std::fabs(u[size_t(p)]);
    }
  std::vector<double> bound(size_t(n_samples * t.M * Ho * Wo), 0.0);
  for (int64_t s = 0; s < n_samples; ++s)
    for (int64_t th = 0; th < TH; ++th)
      for (int64_t tw = 0; tw < TW; ++tw) {
        std::vector<double> V(size_t(t.C * P));  // |B^T d B| per channel
        for (int64_t c = 0; c < t.C; ++c) {
          std::vector<double> d(size_t(P), 0.0);
          for (int64_t a = 0; a < N; ++a)
            for (int64_t e = 0; e < N; ++e) {
              const int64_t ih = th * R + a - t.pads[0], iw = tw * R + e - t.pads[1];
              if (ih >= 0 && ih < t.H && iw >= 0 && iw < t.W)
                d[size_t(a * N + e)] = x.data[size_t(((s * t.C + c) * t.H + ih) * t.W + iw)];
            }
          const std::vector<double> v = sandwich(mt.BT, N, N, d);
          for (int64_t p = 0; p < P; ++p) V[size_t(c * P + p)] = std::fabs(v[size_t(p)]);
        }
        for (int64_t m = 0; m < t.M; ++m) {
          std::vector<double> z(size_t(P), 0.0);  // sum_c (u |U| + 2^-25) |V|, per point
          for (int64_t c = 0; c < t.C; ++c)
            for (int64_t p = 0; p < P; ++p)
              z[size_t(p)] += (kUnit * U[size_t((m * t.C + c) * P + p)] + kSubnormal) * V[size_t(c * P + p)];
          std::vector<double> absA(mt.AT.size());
          for (size_t i = 0; i < absA.size(); ++i) absA[i] = std::fabs(mt.AT[i]);
          const std::vector<double> y = sandwich(absA, R, N, z);
          for (int64_t i = 0; i < R; ++i)
            for (int64_t j = 0; j < R; ++j) {
              const int64_t oh = th * R + i, ow = tw * R + j;
              if (oh < Ho && ow < Wo)
                bound[size_t(((s * t.M + m) * Ho + oh) * Wo + ow)] = y[size_t(i * R + j)];
            }
        }
      }
  return bound;
}

struct Run {
  bool ok = false;
  std::vector<float> y;
  nlohmann::json report, description;
};

Run run_vulkan(const frugal::Graph& g, const std::map<std::string, frugal::RefTensor>& in,
               const std::string& options) {
  Run r;
  vk_test::Executor ex(g, options);
  INFO("create: " << ex.created.message);
  REQUIRE(ex.ok());
  std::vector<vk_test::HostTensor> out;
  const vk_test::Status st = ex.run(vk_test::host_inputs(in), out, nullptr, &r.report);
  INFO("run: " << st.message);
  REQUIRE(st.ok());
  REQUIRE(out.size() == 1);
  r.y = out[0].data;
  r.description = ex.describe();
  CHECK(ex.validation_errors() == 0);
  r.ok = true;
  return r;
}

// max over outputs of |got - ref| - (1e-4 + 1e-3 |ref| + bound): <= 0 passes.
double excess(const std::vector<float>& got, const frugal::RefTensor& ref, const std::vector<double>& bound) {
  REQUIRE(got.size() == ref.data.size());
  double e = -1e30;
  for (size_t i = 0; i < got.size(); ++i) {
    if (std::isnan(got[i])) return 1e30;
    const double b = bound.empty() ? 0.0 : bound[i];
    e = std::max(e, std::fabs(double(got[i]) - ref.data[i]) - (1e-4 + 1e-3 * std::fabs(ref.data[i]) + b));
  }
  return e;
}

const char* const kF16 = "{\"weight_storage\": \"fp16\"}";

}  // namespace

TEST_CASE("fp16: the host's conversion to halves", "[vulkan][fp16]") {
  CHECK(half_bits(1.0f) == 0x3c00);
  CHECK(half_bits(-2.0f) == 0xc000);
  CHECK(half_bits(-0.0f) == 0x8000);
  CHECK(half_bits(65504.0f) == 0x7bff);
  CHECK(half_bits(65519.0f) == 0x7bff);                          // below the midpoint to 65536
  CHECK(half_bits(65520.0f) == 0x7c00);                          // the midpoint, to even: infinity
  CHECK(half_bits(1.0f + 1.0f / 2048) == 0x3c00);                // a tie, to the even 1.0
  CHECK(half_bits(1.0f + 3.0f / 2048) == 0x3c02);                // a tie, to the even 1 + 2^-9
  CHECK(half_bits(1.0f / 16777216) == 0x0001);                   // 2^-24: the smallest subnormal
  CHECK(half_bits(1.0f / 33554432) == 0x0000);                   // 2^-25: a tie, to zero
  CHECK(half_bits(1.5f / 33554432) == 0x0001);                   // above the tie
  CHECK(half_bits(float(0x3ff) / 16777216 + 1e-12f) == 0x03ff);  // the largest subnormal
  CHECK(half_bits(std::ldexp(1.0f, -14)) == 0x0400);             // the smallest normal
  CHECK(std::isnan(half_value(half_bits(std::nanf("")))));
  for (uint32_t h = 0; h < 0x10000; ++h) {                // every half round-trips
    if ((h & 0x7c00) == 0x7c00 && (h & 0x3ff)) continue;  // NaNs
    INFO("half " << h);
    REQUIRE(half_bits(half_value(uint16_t(h))) == h);
  }
  CHECK(frugal::vk::pack_halves({1.0f, -2.0f, 0.5f}) == std::vector<uint32_t>{0xc0003c00u, 0x3800u});
}

// Weights that halves hold exactly: the fp16 kernels must give what fp32 gives.
TEST_CASE("fp16: exact halves give the reference on every tile edge", "[vulkan][fp16][conv]") {
  VK_REQUIRE_DEVICE();
  const std::vector<ConvCase> cases = {
      {1, 1, 1, 1, 1, 1, 1, {0, 0, 0, 0}},      // a 1x1 output, one kernel, K = 1 (a pair's other half is
                                                // padding)
      {3, 5, 9, 7, 3, 1, 1, {1, 1, 1, 1}},      // K = 27 (odd: rows padded), M = 5, 63 pixels
      {7, 17, 13, 11, 1, 1, 1, {0, 0, 0, 0}},   // 1x1: K = 7 < the step, M = 17 > 16
      {20, 67, 10, 13, 3, 2, 1, {1, 1, 1, 1}},  // M beyond 64, stride 2
      {33, 64, 17, 9, 3, 1, 2, {2, 2, 2, 2}},   // dilation 2, K = 297 (odd, long steps)
      {9, 130, 5, 5, 1, 1, 1, {0, 0, 0, 0}},    // 25 pixels, three kernel tiles
      {16, 12, 23, 19, 5, 3, 1, {2, 2, 2, 2}},  // 5x5 stride 3
      {300, 9, 4, 5, 1, 1, 1, {0, 0, 0, 0}},    // K = 300: long steps, the last one short
      {70, 21, 6, 5, 3, 1, 1, {1, 0, 2, 1}},    // K = 630, asymmetric pads
      {20, 150, 4, 4, 3, 1, 1, {1, 1, 1, 1}},   // 16 pixels, 16 kernels per invocation
  };
  for (size_t c = 0; c < cases.size(); ++c) {
    const ConvCase& t = cases[c];
    for (const char* options :
         {"{\"weight_storage\": \"fp16\", \"winograd\": \"off\"}",
          "{\"weight_storage\": \"fp16\", \"winograd\": \"off\", \"conv\": \"dense\"}",
          "{\"weight_storage\": \"fp16\", \"winograd\": \"off\", \"conv_step\": 8}",
          "{\"weight_storage\": \"fp16\", \"winograd\": \"off\", \"min_groups\": 4096}"}) {
      INFO("case " << c << ": C=" << t.C << " M=" << t.M << " H=" << t.H << " W=" << t.W << " k=" << t.k
                   << " options " << options);
      const frugal::Graph g = conv_graph(t, true, true);
      const auto in = vk_test::random_inputs(g, 2, 300 + uint64_t(c));
      const Run r = run_vulkan(g, in, options);
      CHECK(excess(r.y, frugal::reference_run(g, in).at(g.outputs[0]), {}) <= 0.0);
    }
  }
}

TEST_CASE("fp16: exact halves on a gated model and its consumer", "[vulkan][fp16][gating]") {
  VK_REQUIRE_DEVICE();
  // x -> Conv 3x3 (gated on the device: active lists) -> BN -> Relu -> Mul(gate) -> MaxPool
  // -> Conv 3x3 (the gate's consumer: only the input channels that are not all zero) -> Relu -> Gemm.
  for (float threshold : {0.0f, 0.5f}) {
    gate_test::GatedGraphOptions o;
    o.threshold = threshold;
    o.channels = 7;  // K = 63 for the gated conv: odd, rows padded
    frugal::Graph g = gate_test::gated_graph(o);
    round_conv_weights(g);
    const auto in = vk_test::random_inputs(g, 3, 61);
    const frugal::RefTensor want = frugal::reference_run(g, in).at("y");
    double scale = 1e-3;
    for (double v : want.data) scale = std::max(scale, std::fabs(v));
    INFO("threshold " << threshold);
    const Run r = run_vulkan(g, in, kF16);
    CHECK(vk_test::max_diff(r.y, want) <= 1e-4 * scale);  // test_gated.cpp's own tolerance
  }
}

// Gemm's B as halves: matmul_rows (rows 1-8), the 16 x 16 tiles (9 and more),
// matmul_rows_k (min_groups), B stored both ways, K odd, and B sliced by
// columns (max_binding_bytes) in slices of an even count of columns of odd K.
TEST_CASE("fp16: Gemm's B, exact halves and any weights", "[vulkan][fp16][gemm]") {
  VK_REQUIRE_DEVICE();
  struct Case {
    int64_t K, N, batch;
    bool transB;
    const char* options;
  };
  const std::vector<Case> cases = {
      {45, 70, 1, true, ""},
      {45, 70, 3, true, ""},
      {45, 70, 9, true, ""},
      {45, 70, 21, false, ""},
      {131, 70, 3, false, "\"min_groups\": 4096"},
      {200, 70, 8, true, "\"min_groups\": 4096"},
      {131, 70, 2, true, "\"max_binding_bytes\": 4096"},
  };
  for (size_t c = 0; c < cases.size(); ++c) {
    const Case& t = cases[c];
    const std::string options =
        std::string("{\"weight_storage\": \"fp16\"") + (*t.options ? ", " : "") + t.options + "}";
    INFO("case " << c << ": K=" << t.K << " N=" << t.N << " batch " << t.batch << " options " << options);
    frugal::Graph g = gemm_graph(t.K, t.N, t.transB);
    const auto in = vk_test::random_inputs(g, t.batch, 80 + uint64_t(c));
    // Any weights: |d| <= 1e-4 + 1e-3 |ref| + sum_k (u |b_k| + 2^-25) |x_k|.
    const frugal::RefTensor want = frugal::reference_run(g, in).at("y");
    const std::vector<float> w = g.tensor("w").as_float();
    const frugal::RefTensor& x = in.at("x");
    std::vector<double> bound(size_t(t.batch * t.N), 0.0);
    for (int64_t r = 0; r < t.batch; ++r)
      for (int64_t j = 0; j < t.N; ++j)
        for (int64_t k = 0; k < t.K; ++k) {
          const double b = w[size_t(t.transB ? j * t.K + k : k * t.N + j)];
          bound[size_t(r * t.N + j)] +=
              (kUnit * std::fabs(b) + kSubnormal) * std::fabs(x.data[size_t(r * t.K + k)]);
        }
    CHECK(excess(run_vulkan(g, in, options).y, want, bound) <= 0.0);
    // Exact halves: the fp32 tolerance.
    round_to_halves(g, "w");
    CHECK(excess(run_vulkan(g, in, options).y, frugal::reference_run(g, in).at("y"), {}) <= 0.0);
  }
  // B's bytes halve (N K = 45 x 70, even).
  const frugal::Graph g = gemm_graph(45, 70, true);
  const auto in = vk_test::random_inputs(g, 1, 5);
  const Run a = run_vulkan(g, in, ""), b = run_vulkan(g, in, kF16);
  CHECK(a.description["vulkan"]["weights_bytes"].get<int64_t>() -
            b.description["vulkan"]["weights_bytes"].get<int64_t>() ==
        45 * 70 * 2);
}

// Any weights: the derived bound, direct and Winograd (F(2x2), F(4x4), split).
TEST_CASE("fp16: any weights within fp16's bound of the float64 reference", "[vulkan][fp16][winograd]") {
  VK_REQUIRE_DEVICE();
  const std::vector<ConvCase> cases = {
      {1, 1, 3, 3, 3, 1, 1, {0, 0, 0, 0}},      // one output pixel: one tile, mostly outside
      {3, 5, 9, 7, 3, 1, 1, {1, 1, 1, 1}},      // partial tiles on both sides
      {17, 67, 13, 11, 3, 1, 1, {1, 0, 2, 1}},  // asymmetric pads, M beyond 64, C odd
      {20, 130, 5, 9, 3, 1, 1, {2, 2, 0, 0}},   // pads only top and left, three kernel tiles
      {260, 6, 7, 7, 3, 1, 1, {1, 1, 1, 1}},    // C = 260: long steps; M = 6, padded to 8 in U
      {24, 132, 7, 7, 3, 1, 1, {1, 1, 1, 1}},   // 7 x 7: 16 kernels per invocation in F(2x2)
      {128, 20, 6, 7, 3, 1, 1, {1, 1, 1, 1}},   // split in two with min_groups
  };
  struct Mode {
    const char* options;
    int64_t R;  // 0: direct
  };
  const std::vector<Mode> modes = {
      {"{\"weight_storage\": \"fp16\", \"winograd\": \"off\"}", 0},
      {"{\"weight_storage\": \"fp16\", \"winograd\": \"f23\"}", 2},
      {"{\"weight_storage\": \"fp16\", \"winograd\": \"f43\"}", 4},
      {"{\"weight_storage\": \"fp16\", \"winograd\": \"f43\", \"min_groups\": 4096}", 4},
  };
  for (size_t c = 0; c < cases.size(); ++c) {
    const ConvCase& t = cases[c];
    const frugal::Graph g = conv_graph(t, c % 2 == 1, false);  // Relu: slope 1, the bound holds through it
    const auto in = vk_test::random_inputs(g, 2, 500 + uint64_t(c));
    const frugal::RefTensor want = frugal::reference_run(g, in).at(g.outputs[0]);
    const std::vector<float> w = g.tensor("w").as_float();
    for (const Mode& mode : modes) {
      INFO("case " << c << ": C=" << t.C << " M=" << t.M << " H=" << t.H << " W=" << t.W << " options "
                   << mode.options);
      const std::vector<double> bound =
          mode.R == 0 ? direct_bound(t, w, in.at("x")) : winograd_bound(t, mode.R, w, in.at("x"));
      const Run r = run_vulkan(g, in, mode.options);
      CHECK(excess(r.y, want, bound) <= 0.0);
      CHECK(r.description["vulkan"]["weight_storage"] == "fp16");
    }
  }
}

// fp16 subnormals: Vulkan lets a driver flush them to zero in unpackHalf2x16
// (without shaderDenormPreserveFloat16). Either way a weight then moves by at
// most 2^-14 (the smallest normal half); the test says which this device does.
TEST_CASE("fp16: subnormal halves", "[vulkan][fp16]") {
  VK_REQUIRE_DEVICE();
  const float w = 3.0f / 16777216;  // 3 x 2^-24: a subnormal half, exact
  GraphMaker m;
  m.input("x", {-1, 2, 1, 1});
  m.node("Conv", "conv", {"x", m.floats("w", {1, 2, 1, 1}, {w, 1.0f / 1024})}, {"y"})
      .set_attr_ints("kernel_shape", {1, 1});
  m.output("y");
  frugal::RefTensor x;
  x.dims = {1, 2, 1, 1};
  x.data = {4096.0, 0.0};
  const std::map<std::string, frugal::RefTensor> in = {{"x", x}};
  const Run r = run_vulkan(m.g, in, kF16);
  const double want = double(w) * 4096.0;  // 3 x 2^-12
  CHECK(std::fabs(r.y[0] - want) <= 4096.0 / 16384);
  if (r.y[0] == 0.0f)
    WARN("this device flushes fp16 subnormals to zero in unpackHalf2x16");
  else
    CHECK(r.y[0] == Approx(want).epsilon(1e-6));
}

// Half the kernels' bytes, the same arena; fp32 stays the default; bad values refused.
TEST_CASE("fp16: weight bytes halve, the arena does not change", "[vulkan][fp16]") {
  VK_REQUIRE_DEVICE();
  struct Layout {
    ConvCase t;
    const char* winograd;
    int64_t kernel_words32, kernel_words16;  // the kernels' words in the weights buffer
  };
  const std::vector<Layout> layouts = {
      {{20, 12, 9, 9, 1, 1, 1, {0, 0, 0, 0}}, "off", 12 * 20, 12 * 20 / 2},       // K = 20
      {{3, 5, 9, 7, 3, 1, 1, {1, 1, 1, 1}}, "off", 5 * 27, 5 * 28 / 2},           // K = 27: rows of 28 halves
      {{17, 6, 13, 11, 3, 1, 1, {1, 1, 1, 1}}, "f23", 16 * 17 * 8, 16 * 17 * 4},  // U [16][17][8]
      {{17, 6, 13, 11, 3, 1, 1, {1, 1, 1, 1}}, "f43", 36 * 17 * 8, 36 * 17 * 4},  // U [36][17][8]
  };
  for (const Layout& l : layouts) {
    INFO("C=" << l.t.C << " M=" << l.t.M << " k=" << l.t.k << " winograd " << l.winograd);
    const frugal::Graph g = conv_graph(l.t, false, false);
    const auto in = vk_test::random_inputs(g, 2, 7);
    // conv.comp's layouts (conv_texel off: a direct conv on texels keeps its float32 kernels k-major)
    const std::string w = std::string("\"winograd\": \"") + l.winograd + "\", \"conv_texel\": \"off\"";
    const Run a = run_vulkan(g, in, "{" + w + "}"),
              b = run_vulkan(g, in, "{\"weight_storage\": \"fp16\", " + w + "}");
    CHECK(a.description["vulkan"]["weight_storage"] == "fp32");  // the default
    CHECK(a.description["vulkan"]["weights_bytes"].get<int64_t>() -
              b.description["vulkan"]["weights_bytes"].get<int64_t>() ==
          4 * (l.kernel_words32 - l.kernel_words16));
    CHECK(a.report["peak_bytes"] == b.report["peak_bytes"]);
    CHECK(a.report["arena_bytes"] == b.report["arena_bytes"]);
  }
  const frugal::Graph g = conv_graph({2, 3, 5, 5, 3, 1, 1, {1, 1, 1, 1}}, false, false);
  for (const char* bad : {"{\"weight_storage\": \"fp8\"}", "{\"weight_storage\": 16}"}) {
    vk_test::Executor ex(g, bad);
    CHECK(!ex.ok());
    CHECK_THAT(ex.created.message, Contains("'weight_storage' must be \"fp32\" (the default) or \"fp16\""));
  }
  frugal::Graph big = g;  // a weight beyond fp16's range is refused, naming the layer
  big.tensors.at("w").f32()[4] = 70000.0f;
  vk_test::Executor ex(big, kF16);
  CHECK(!ex.ok());
  CHECK_THAT(ex.created.message, Contains("beyond fp16's range") && Contains("conv"));
  vk_test::Executor fine(big, "");  // fp32 holds it
  CHECK(fine.ok());
}
