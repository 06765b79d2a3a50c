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
  // 1 - uniform() lies in (0, 1], so the log is finite.
  const double r = std::sqrt(-2.0 * std::log(1.0 - uniform()));
  const double theta = 2.0 * M_PI * uniform();
  spare_ = r * std::sin(theta);
  have_spare_ = true;
  return r * std::cos(theta);
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

std::vector<float> normal_floats(SplitMix64& rng, size_t count, double stddev) {
  std::vector<float> out(count);
  for (float& v : out) v = static_cast<float>(stddev * rng.normal());
  return out;
}

}  // namespace frugal::zoo
