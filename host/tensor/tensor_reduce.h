// Reductions of strided tensors, over all elements or along one dimension, as
// Torch7 has them: along a dimension the result keeps that dimension with
// size 1 (or k for topk). Indices in results are 1-based (they go to Lua);
// dimension arguments are 0-based. NaN wins a max or min (it propagates).
#pragma once

#include <cstdint>
#include <utility>

#include "tensor/strided_tensor.h"

namespace frugal {

enum class Reduction { Sum, Mean };

double reduce_all(const StridedTensor& t, Reduction r);
StridedTensor reduce_dim(const StridedTensor& t, size_t d, Reduction r);

struct Extreme {
  float value;
  int64_t index;  // 1-based position in C order
};
// Throws on an empty tensor.
Extreme extreme_all(const StridedTensor& t, bool want_max);
// Values and their 1-based indices along d.
std::pair<StridedTensor, StridedTensor> extreme_dim(const StridedTensor& t, size_t d, bool want_max);
// The k largest (or smallest) along d, sorted, and their 1-based indices;
// ties keep the lower index first.
std::pair<StridedTensor, StridedTensor> topk(const StridedTensor& t, int64_t k, size_t d, bool largest);

}  // namespace frugal
