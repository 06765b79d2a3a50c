// The executor's vectorised Sigmoid against the float64 formula, on a dense
// sweep of inputs (every path the exp approximation takes: both clamps, the
// range reduction near 0 and at large |x|), and NaN passing through.
#include <catch2/catch.hpp>
#include <cmath>
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
