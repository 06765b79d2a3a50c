// Deterministic pseudo-random fills for tensors (test inputs, synthetic data).
// The generator is splitmix64, written out here rather than taken from <random>,
// whose distributions differ between standard libraries: the same seed gives the
// same values on every platform.
#pragma once

#include <cstdint>

#include "tensor/tensor.h"

namespace frugal {

// Uniform in [-1, 1).
void fill_uniform(Tensor& t, uint64_t seed);
// Standard normal (mean 0, variance 1), Box-Muller on the same generator.
void fill_normal(Tensor& t, uint64_t seed);

}  // namespace frugal
