// Rows of a plane split by their columns' remainder mod s into s phase rows,
// with zero padding: how the gated conv lays out its active input channels
// (kernels/gated_conv.cpp: a strided conv's phase planes; kernels/gated_winograd.h:
// a Winograd tile row's column planes), so that every tap reads a shifted row.
#pragma once

#include <cstdint>

namespace frugal::cpu {

// For rows i of [0, rows) (source row i at src + i * src_stride, W values, pl zeros
// before it and zeros after) and phases j of [0, s): phase row j of row i, at
// dst + i * dst_stride + j * phase_stride, gets `cols` values, value q being the
// padded row's column s * q + j. Vector loops for s = 1, 2 and 4.
void split_columns(const float* src, int64_t rows, int64_t src_stride, int64_t W, int64_t pl, int64_t s,
                   int64_t cols, float* dst, int64_t dst_stride, int64_t phase_stride);

}  // namespace frugal::cpu
