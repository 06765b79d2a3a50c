// Shared by the pointwise kernel and the layer compiler: the epilogue step(s)
// one BatchNormalization / Relu / Clip / Sigmoid / Identity / Dropout node adds.
#pragma once

#include "kernels/kernel.h"

namespace frugal::cpu {

// Appends node s's effect to `e` (nothing for Identity and inference Dropout);
// unsupported() for training-mode nodes and run-time parameters.
void append_to_epilogue(const KernelSpec& s, Epilogue& e);

}  // namespace frugal::cpu
