// The CPU executor's gated kernels (docs/GATING.md), made instead of the
// registry's kernel for the layers the layer graph marks: a gated conv
// (KernelSpec::gate: its gate and Mul inside) and a gate's Conv / Gemm
// consumer (KernelSpec::zero_block: skips all-zero input channels).
#pragma once

#include <memory>

#include "kernels/kernel.h"

namespace frugal::cpu {

// A Conv with a gate and/or skipping all-zero input channels (group 1 only:
// unsupported() otherwise, for a gated conv; nullptr for a mere consumer).
std::unique_ptr<Kernel> make_gated_conv(const KernelSpec& s);
// A Gemm after a gate skipping the blocks of columns whose inputs are all zero;
// nullptr where it cannot (A transposed, B computed, a C that is not a per-column bias).
std::unique_ptr<Kernel> make_gated_gemm(const KernelSpec& s);

}  // namespace frugal::cpu
