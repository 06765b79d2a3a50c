// GCC 12 warns inside its own AVX-512 intrinsics once they are inlined here (as in
// conv_1x1.cpp): not this file's values.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "kernels/split_columns.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

#include "kernels/conv_1x1.h"

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

#pragma GCC push_options
#pragma GCC target("avx512f")
namespace avx512 {

// Lanes [lo, hi) of 16, clamped.
inline __mmask16 lanes(int64_t lo, int64_t hi) {
  lo = std::clamp<int64_t>(lo, 0, 16);
  hi = std::clamp<int64_t>(hi, lo, 16);
  return __mmask16(((1u << hi) - 1) & ~((1u << lo) - 1));
}

// The padded row's columns [c0, c0 + 16) (c0 may be negative): zeros outside [0, W). The
// masked load reads only the lanes inside the row.
inline __m512 load16(const float* src, int64_t W, int64_t c0) {
  const __mmask16 m = lanes(-c0, W - c0);
  return m ? _mm512_maskz_loadu_ps(m, src + c0) : _mm512_setzero_ps();
}

// Per row, 16 values of every phase at a time: S vectors of the padded row (masked at its
// edges) permuted into the phases' vectors (no loop remainder: rows here are 7-60 values).
template <int S>
void split_rows(const float* src, int64_t rows, int64_t ss, int64_t W, int64_t pl, int64_t cols, float* dst,
                int64_t ds, int64_t ps) {
  const __m512i step = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
  const __m512i by_s = _mm512_mullo_epi32(step, _mm512_set1_epi32(S));  // lane i: S * i
  for (int64_t r = 0; r < rows; ++r) {
    const float* x = src + r * ss;
    float* d = dst + r * ds;
    for (int64_t q0 = 0; q0 < cols; q0 += 16) {
      const __mmask16 out = lanes(0, cols - q0);
      const int64_t c0 = S * q0 - pl;
      __m512 v[S];
      for (int k = 0; k < S; ++k) v[k] = load16(x, W, c0 + 16 * k);
      for (int j = 0; j < S; ++j) {
        const __m512i idx = _mm512_add_epi32(by_s, _mm512_set1_epi32(j));  // S * i + j
        __m512 phase;
        if constexpr (S == 1) {
          phase = v[0];
        } else if constexpr (S == 2) {
          phase = _mm512_permutex2var_ps(v[0], idx, v[1]);
        } else {  // lanes 0-7 from v0, v1 and from v2, v3 (idx < 32 there), then joined
          const __m512 lo = _mm512_permutex2var_ps(v[0], idx, v[1]);
          const __m512 hi = _mm512_permutex2var_ps(v[2], idx, v[3]);
          phase = _mm512_shuffle_f32x4(lo, hi, 0x44);
        }
        _mm512_mask_storeu_ps(d + j * ps + q0, out, phase);
      }
    }
  }
}

}  // namespace avx512
#pragma GCC pop_options

// Without AVX-512: compiled per instruction set (one dispatch per call, not per row).
__attribute__((target_clones("avx2", "default"))) void split_columns_loops(
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

}  // namespace

// Value by value, a stride-2 conv's arrangement took a quarter of resnet18's gated
// layer2.0.conv1; the compiler's vector loops left the short rows of F(4x4, 3x3)'s four
// column planes (15 values each on a 56 x 56 plane) to their scalar remainders.
void split_columns(const float* src, int64_t rows, int64_t src_stride, int64_t W, int64_t pl, int64_t s,
                   int64_t cols, float* dst, int64_t dst_stride, int64_t phase_stride) {
  if (packed_isa() == PackedIsa::Avx512) {
    switch (s) {
      case 1:
        return avx512::split_rows<1>(src, rows, src_stride, W, pl, cols, dst, dst_stride, phase_stride);
      case 2:
        return avx512::split_rows<2>(src, rows, src_stride, W, pl, cols, dst, dst_stride, phase_stride);
      case 4:
        return avx512::split_rows<4>(src, rows, src_stride, W, pl, cols, dst, dst_stride, phase_stride);
      default:
        break;
    }
  }
  split_columns_loops(src, rows, src_stride, W, pl, s, cols, dst, dst_stride, phase_stride);
}

}  // namespace frugal::cpu
