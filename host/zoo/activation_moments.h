// First and second moments of activations, propagated through a network at
// build time so that the zoo can scale weights to keep activations O(1) (see
// graph_builder.h). Each value is modelled as N(mean, mean_square - mean^2),
// the same for every element; good enough to set scales within a small factor.
#pragma once

#include <functional>

namespace frugal::zoo {

struct Moments {
  double mean = 0.0;
  double mean_square = 1.0;  // E[x^2]
  double variance() const;
};

// E[f(x)] and E[f(x)^2] for x ~ N(m.mean, m.variance()), by quadrature.
Moments apply_elementwise(const Moments& m, const std::function<double(double)>& f);

Moments relu_moments(const Moments& m);
Moments relu6_moments(const Moments& m);
Moments sigmoid_moments(const Moments& m);
Moments silu_moments(const Moments& m);
Moments add_moments(const Moments& a, const Moments& b);  // independent operands
Moments mul_moments(const Moments& a, const Moments& b);  // independent operands

}  // namespace frugal::zoo
