// Normalization ops: BatchNormalization as the per-channel affine map it is at
// inference (used by the epilogue), and LRN.
#pragma once

#include <vector>

#include "kernels/kernel.h"

namespace frugal::cpu {

// BatchNormalization node s as y = scale[c] * x + shift[c]:
// scale = gamma / sqrt(var + eps), shift = beta - scale * mean (computed in double).
void batchnorm_affine(const KernelSpec& s, std::vector<float>& scale, std::vector<float>& shift);

}  // namespace frugal::cpu
