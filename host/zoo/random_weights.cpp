#include "zoo/random_weights.h"

#include <cmath>

namespace frugal::zoo {

uint64_t SplitMix64::next() {
  uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

double SplitMix64::uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }

double SplitMix64::uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }

double SplitMix64::normal() {
  if (have_spare_) {
    have_spare_ = false;
    return spare_;
  }
  // Marsaglia's polar form of Box-Muller: no trigonometry, one log per pair.
  double u, v, s;
  do {
    u = 2.0 * uniform() - 1.0;
    v = 2.0 * uniform() - 1.0;
    s = u * u + v * v;
  } while (s >= 1.0 || s == 0.0);
  const double f = std::sqrt(-2.0 * std::log(s) / s);
  spare_ = v * f;
  have_spare_ = true;
  return u * f;
}

SplitMix64 tensor_stream(uint64_t seed, const std::string& name) {
  // FNV-1a of the name, mixed with the seed through one SplitMix step.
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : name) {
    h ^= c;
    h *= 0x100000001B3ull;
  }
  SplitMix64 mix(seed * 0x9E3779B97F4A7C15ull ^ h);
  return SplitMix64(mix.next());
}

void fill_normalish(SplitMix64& rng, float* out, size_t count, double stddev) {
  // Irwin-Hall with four 16-bit uniforms from one 64-bit draw: mean 0, variance 1,
  // bell-shaped within +-3.46. Several times faster than Box-Muller, which matters
  // for the 138M weights of vgg16_bn.
  const double scale = stddev / std::sqrt(4.0 * (65536.0 * 65536.0 - 1.0) / 12.0);
  for (size_t i = 0; i < count; ++i) {
    const uint64_t r = rng.next();
    const int64_t sum = static_cast<int64_t>(r & 0xFFFF) + static_cast<int64_t>((r >> 16) & 0xFFFF) +
                        static_cast<int64_t>((r >> 32) & 0xFFFF) + static_cast<int64_t>(r >> 48);
    out[i] = static_cast<float>(scale * (static_cast<double>(sum) - 2.0 * 65535.0));
  }
}

}  // namespace frugal::zoo
