// Deterministic, fast random numbers for zoo weights. Each tensor gets its own
// stream seeded from (model seed, tensor name), so a tensor's values do not
// depend on the order in which a network is built.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace frugal::zoo {

// SplitMix64: tiny, fast, good enough for weights (not for cryptography).
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t state) : state_(state) {}
  uint64_t next();
  double uniform();                      // [0, 1)
  double uniform(double lo, double hi);  // [lo, hi)
  double normal();                       // N(0, 1), Box-Muller (pairs cached)
  double normal(double mean, double stddev) { return mean + stddev * normal(); }

 private:
  uint64_t state_;
  bool have_spare_ = false;
  double spare_ = 0.0;
};

// The stream for tensor `name` of a model built with `seed`.
SplitMix64 tensor_stream(uint64_t seed, const std::string& name);

// Fills `out` with `count` samples with mean 0 and standard deviation `stddev`, bell-shaped
// (sum of four uniforms), as float32: fast enough for 100M+ weights.
void fill_normalish(SplitMix64& rng, float* out, size_t count, double stddev);

}  // namespace frugal::zoo
