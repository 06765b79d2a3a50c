#include "tensor/tensor_random.h"

#include <cmath>

namespace frugal {

namespace {

struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 24 random bits: exactly representable in float.
  double unit() { return static_cast<double>(next() >> 40) * (1.0 / 16777216.0); }
};

}  // namespace

void fill_uniform(Tensor& t, uint64_t seed) {
  SplitMix64 g{seed};
  for (float& v : t.data) v = static_cast<float>(2.0 * g.unit() - 1.0);
}

void fill_normal(Tensor& t, uint64_t seed) {
  SplitMix64 g{seed};
  const double two_pi = 6.283185307179586;
  for (size_t i = 0; i < t.data.size(); i += 2) {
    double u1 = 1.0 - g.unit();  // (0, 1]: log is finite
    double u2 = g.unit();
    double r = std::sqrt(-2.0 * std::log(u1));
    t.data[i] = static_cast<float>(r * std::cos(two_pi * u2));
    if (i + 1 < t.data.size()) t.data[i + 1] = static_cast<float>(r * std::sin(two_pi * u2));
  }
}

}  // namespace frugal
