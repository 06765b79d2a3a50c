#include "kernels/split_columns.h"

#include <algorithm>
#include <cstring>

namespace frugal::cpu {

namespace {

// Value q of phase j: the padded row's column s * q + j, zero outside the row.
inline float padded_at(const float* src, int64_t W, int64_t pl, int64_t s, int64_t q, int64_t j) {
  const int64_t c = s * q + j - pl;
  return c >= 0 && c < W ? src[c] : 0.0f;
}

// One row, S a constant: the values [qa, qb) (every phase's column inside the row) in
// a loop the compiler vectorises (interleaved loads and permutes), the edges one by one.
template <int S>
__attribute__((always_inline)) inline void split_row(const float* __restrict src, int64_t W, int64_t pl,
                                                     int64_t cols, int64_t qa, int64_t qb,
                                                     float* __restrict dst, int64_t ps) {
  for (int64_t q = 0; q < qa; ++q)
    for (int j = 0; j < S; ++j) dst[j * ps + q] = padded_at(src, W, pl, S, q, j);
  const float* __restrict p = src + S * qa - pl;
  float* __restrict d = dst + qa;
  const int64_t n = qb - qa;
  if constexpr (S == 1) {
    std::memcpy(d, p, sizeof(float) * size_t(n));
  } else {
    for (int64_t q = 0; q < n; ++q)
#pragma GCC unroll 4
      for (int j = 0; j < S; ++j) d[j * ps + q] = p[S * q + j];
  }
  for (int64_t q = qb; q < cols; ++q)
    for (int j = 0; j < S; ++j) dst[j * ps + q] = padded_at(src, W, pl, S, q, j);
}

template <int S>
__attribute__((always_inline)) inline void split_rows(const float* src, int64_t rows, int64_t ss, int64_t W,
                                                      int64_t pl, int64_t cols, float* dst, int64_t ds,
                                                      int64_t ps) {
  const int64_t qa = std::min(cols, (pl + S - 1) / S);
  const int64_t qb = std::max(qa, W + pl >= S ? std::min(cols, (W + pl - S) / S + 1) : int64_t(0));
  for (int64_t r = 0; r < rows; ++r) split_row<S>(src + r * ss, W, pl, cols, qa, qb, dst + r * ds, ps);
}

}  // namespace

// Compiled per instruction set (one dispatch per call, not per row): a stride-2 conv's
// arrangement, one value at a time, took a quarter of resnet18's gated layer2.0.conv1.
__attribute__((target_clones("avx512f", "avx2", "default"))) void split_columns(
    const float* src, int64_t rows, int64_t src_stride, int64_t W, int64_t pl, int64_t s, int64_t cols,
    float* dst, int64_t dst_stride, int64_t phase_stride) {
  switch (s) {
    case 1:
      return split_rows<1>(src, rows, src_stride, W, pl, cols, dst, dst_stride, phase_stride);
    case 2:
      return split_rows<2>(src, rows, src_stride, W, pl, cols, dst, dst_stride, phase_stride);
    case 4:
      return split_rows<4>(src, rows, src_stride, W, pl, cols, dst, dst_stride, phase_stride);
    default:
      for (int64_t r = 0; r < rows; ++r)
        for (int64_t j = 0; j < s; ++j)
          for (int64_t q = 0; q < cols; ++q)
            dst[r * dst_stride + j * phase_stride + q] = padded_at(src + r * src_stride, W, pl, s, q, j);
  }
}

}  // namespace frugal::cpu
