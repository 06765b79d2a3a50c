// The executor's vectorised Sigmoid against the float64 formula, on a dense
// sweep of inputs (every path the exp approximation takes: both clamps, the
// range reduction near 0 and at large |x|), and NaN passing through; the gated
// Gemm's sum of scaled rows against float64 sums.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "kernels/vector_math.h"

TEST_CASE("sigmoid_inplace matches 1 / (1 + exp(-x)) in float64", "[cpu][math]") {
  std::vector<float> x;
  for (double v = -120.0; v <= 120.0; v += 0.0137) x.push_back(float(v));
  for (float v : {0.0f, -0.0f, 1e-8f, -1e-8f, 87.0f, -87.0f, 88.7f, -88.7f, 1e30f, -1e30f}) x.push_back(v);
  std::vector<float> y = x;
  frugal::cpu::sigmoid_inplace(y.data(), int64_t(y.size()));
  double worst_rel = 0.0, worst_abs_below = 0.0;
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = 1.0 / (1.0 + std::exp(-double(x[i])));
    if (x[i] >= -87.0f)
      worst_rel = std::max(worst_rel, std::abs(double(y[i]) - want) / want);
    else
      worst_abs_below = std::max(worst_abs_below, std::abs(double(y[i]) - want));
  }
  CHECK(worst_rel < 1e-6);
  CHECK(worst_abs_below < 1e-38);

  float nan = std::numeric_limits<float>::quiet_NaN();
  frugal::cpu::sigmoid_inplace(&nan, 1);
  CHECK(std::isnan(nan));
}

TEST_CASE("add_scaled_rows adds each on sample's scaled rows, off samples untouched", "[cpu][math]") {
  // 7 rows (a pass of four, then three alone) of 37 columns (two vectors of 16 and a tail),
  // 3 samples, the middle one off.
  const int64_t nrows = 7, n = 37, g = 3, ld = 40, lda = 9, ldy = 41;
  std::vector<float> rows(size_t(nrows * ld)), a(size_t(g * lda)), y(size_t(g * ldy));
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = float(int(i * 7 % 23) - 11) / 8.0f;
  for (size_t i = 0; i < a.size(); ++i) a[i] = float(int(i * 5 % 13) - 6) / 4.0f;
  for (size_t i = 0; i < y.size(); ++i) y[i] = float(i % 5);
  const std::vector<float> before = y;
  const uint8_t on[] = {1, 0, 0, 0, 1, 0};  // on_stride 2: samples 0 and 2
  frugal::cpu::add_scaled_rows(y.data(), ldy, rows.data(), ld, a.data(), lda, on, 2, g, nrows, n);
  for (int64_t s = 0; s < g; ++s)
    for (int64_t j = 0; j < ldy; ++j) {
      double want = before[size_t(s * ldy + j)];
      if (s != 1 && j < n)
        for (int64_t r = 0; r < nrows; ++r) want += double(a[size_t(s * lda + r)]) * rows[size_t(r * ld + j)];
      INFO("sample " << s << " column " << j);
      CHECK(y[size_t(s * ldy + j)] == Approx(want).margin(1e-5));
    }
}
