#include "zoo/activation_moments.h"

#include <algorithm>
#include <cmath>

namespace frugal::zoo {

double Moments::variance() const { return std::max(0.0, mean_square - mean * mean); }

Moments apply_elementwise(const Moments& m, const std::function<double(double)>& f) {
  // Midpoint rule over +-8 standard deviations: plenty for smooth-ish f.
  const double sd = std::sqrt(m.variance());
  if (sd < 1e-12) {
    const double v = f(m.mean);
    return {v, v * v};
  }
  constexpr int kSteps = 400;
  const double lo = -8.0, step = 16.0 / kSteps;
  double w_sum = 0.0, e1 = 0.0, e2 = 0.0;
  for (int i = 0; i < kSteps; ++i) {
    const double z = lo + (i + 0.5) * step;
    const double w = std::exp(-0.5 * z * z);
    const double v = f(m.mean + sd * z);
    w_sum += w;
    e1 += w * v;
    e2 += w * v * v;
  }
  return {e1 / w_sum, e2 / w_sum};
}

Moments relu_moments(const Moments& m) {
  return apply_elementwise(m, [](double x) { return x > 0.0 ? x : 0.0; });
}

Moments relu6_moments(const Moments& m) {
  return apply_elementwise(m, [](double x) { return std::min(std::max(x, 0.0), 6.0); });
}

Moments sigmoid_moments(const Moments& m) {
  return apply_elementwise(m, [](double x) { return 1.0 / (1.0 + std::exp(-x)); });
}

Moments silu_moments(const Moments& m) {
  return apply_elementwise(m, [](double x) { return x / (1.0 + std::exp(-x)); });
}

Moments add_moments(const Moments& a, const Moments& b) {
  return {a.mean + b.mean, a.mean_square + b.mean_square + 2.0 * a.mean * b.mean};
}

Moments mul_moments(const Moments& a, const Moments& b) {
  return {a.mean * b.mean, a.mean_square * b.mean_square};
}

}  // namespace frugal::zoo
