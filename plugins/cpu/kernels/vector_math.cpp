#include "kernels/vector_math.h"

#include <algorithm>
#include <cstring>

namespace frugal::cpu {

namespace {

// exp(x) = 2^n * exp(r), n = round(x / ln 2), r = x - n ln 2 in [-ln2/2, ln2/2]
// (ln 2 in two parts, so r is exact), exp(r) by Cephes' degree-6 polynomial,
// 2^n by writing n into the exponent bits. Inline, branch-free: vectorises.
inline float exp_approx(float x) {
  x = x < -87.3f ? -87.3f : x;  // keeps 2^n a normal float; NaN passes (comparisons are false)
  x = x > 88.7f ? 88.7f : x;
  // Round to nearest by adding and subtracting 1.5 * 2^23 (std::floor is a libm
  // call here: GCC inlines it only without trapping math, and then not vectorised).
  const float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = x - n * 0.693359375f;
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  // NaN stays NaN through p; its n becomes 0 here, as converting NaN to an int is undefined.
  const float n_finite = n == n ? n : 0.0f;
  const int32_t bits = (int32_t(n_finite) + 127) << 23;  // n in [-126, 128]: a positive shift
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

}  // namespace

__attribute__((target_clones("avx512f", "avx2", "default"))) void sigmoid_inplace(float* __restrict x,
                                                                                  int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = 1.0f / (1.0f + exp_approx(-x[i]));
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void swish_inplace(float* __restrict x,
                                                                                int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = x[i] * (1.0f / (1.0f + exp_approx(-x[i])));
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void affine_inplace(float* __restrict x,
                                                                                 int64_t n, float scale,
                                                                                 float shift) {
  for (int64_t i = 0; i < n; ++i) x[i] = scale * x[i] + shift;
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void affine_relu_inplace(float* __restrict x,
                                                                                      int64_t n, float scale,
                                                                                      float shift) {
  for (int64_t i = 0; i < n; ++i) {
    const float v = scale * x[i] + shift;
    x[i] = v > 0.0f ? v : 0.0f;
  }
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void relu_inplace(float* __restrict x,
                                                                               int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = x[i] > 0.0f ? x[i] : 0.0f;
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void clip_inplace(float* __restrict x, int64_t n,
                                                                               float lo, float hi) {
  for (int64_t i = 0; i < n; ++i) x[i] = std::min(std::max(x[i], lo), hi);
}

__attribute__((target_clones("avx512f", "avx2", "default"))) double sum_floats(const float* __restrict x,
                                                                               int64_t n) {
  typedef float v8f __attribute__((vector_size(32), aligned(4)));
  typedef double v8d __attribute__((vector_size(64)));
  v8d a = {}, b = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    v8f lo, hi;
    std::memcpy(&lo, x + i, sizeof lo);
    std::memcpy(&hi, x + i + 8, sizeof hi);
    a += __builtin_convertvector(lo, v8d);
    b += __builtin_convertvector(hi, v8d);
  }
  a += b;
  double s = 0.0;
  for (int k = 0; k < 8; ++k) s += a[k];
  for (; i < n; ++i) s += double(x[i]);
  return s;
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void copy_stride2(float* __restrict y,
                                                                               const float* __restrict x,
                                                                               int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = x[2 * i];
}

namespace {
using Floats16 = float __attribute__((vector_size(64)));

// Rows [r, r + R) of add_scaled_rows: sixteen columns of them held in vectors (GCC vector
// types) while each sample's stretch of y is read, updated and stored once. Always inlined,
// so that each clone of add_scaled_rows has it in its instruction set.
template <int R>
__attribute__((always_inline)) inline void scaled_rows_pass(float* __restrict y, int64_t ldy,
                                                            const float* __restrict rows, int64_t ld,
                                                            const float* __restrict a, int64_t lda,
                                                            const uint8_t* __restrict on, int64_t on_stride,
                                                            int64_t g, int64_t n) {
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    Floats16 v[R];
    for (int r = 0; r < R; ++r) std::memcpy(&v[r], rows + r * ld + j, sizeof v[r]);
    for (int64_t s = 0; s < g; ++s) {
      if (!on[s * on_stride]) continue;
      const float* as = a + s * lda;
      Floats16 sum = as[0] * v[0];
      for (int r = 1; r < R; ++r) sum += as[r] * v[r];
      Floats16 acc;
      std::memcpy(&acc, y + s * ldy + j, sizeof acc);
      acc += sum;
      std::memcpy(y + s * ldy + j, &acc, sizeof acc);
    }
  }
  for (int64_t s = 0; s < g; ++s)
    if (on[s * on_stride])
      for (int64_t k = j; k < n; ++k) {
        float sum = a[s * lda] * rows[k];
        for (int r = 1; r < R; ++r) sum += a[s * lda + r] * rows[r * ld + k];
        y[s * ldy + k] += sum;
      }
}
}  // namespace

// Four rows a pass, so that each sample's y is loaded and stored once per four rows, then the
// last nrows % 4 one at a time.
__attribute__((target_clones("avx512f", "avx2", "default"))) void add_scaled_rows(
    float* y, int64_t ldy, const float* rows, int64_t ld, const float* a, int64_t lda, const uint8_t* on,
    int64_t on_stride, int64_t g, int64_t nrows, int64_t n) {
  int64_t r = 0;
  for (; r + 4 <= nrows; r += 4)
    scaled_rows_pass<4>(y, ldy, rows + r * ld, ld, a + r, lda, on, on_stride, g, n);
  for (; r < nrows; ++r) scaled_rows_pass<1>(y, ldy, rows + r * ld, ld, a + r, lda, on, on_stride, g, n);
}

}  // namespace frugal::cpu
