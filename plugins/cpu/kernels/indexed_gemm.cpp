// GCC 12 warns inside its own AVX-512 intrinsics once they are inlined here
// (as in conv_1x1.cpp): not this file's values.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "kernels/indexed_gemm.h"

#include <immintrin.h>

#include <algorithm>
#include <cstring>

namespace frugal::cpu {

#pragma GCC push_options
#pragma GCC target("avx512f,avx2,fma")
namespace avx512 {
#include "kernels/simd_avx512.inc"
constexpr int kRows = 6, kVectors = 4;  // 24 accumulators + 4 input vectors + 1 broadcast of 32 registers
#include "kernels/indexed_gemm_tile.inc"
}  // namespace avx512
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {
#include "kernels/simd_avx2.inc"
constexpr int kRows = 4, kVectors = 3;  // 12 accumulators + 3 input vectors + 1 broadcast of 16 registers
#include "kernels/indexed_gemm_tile.inc"
}  // namespace avx2
#pragma GCC pop_options

namespace {
// Without AVX2: one item per row, plain loops.
void run_plain(const IndexedGemm& g, int64_t r0, int64_t r1) {
  for (int64_t r = r0; r < r1; ++r) {
    const float* w = g.w + g.rows[r] * g.ldw;
    float* y = g.y + (g.yrows ? g.yrows[r] : r) * g.ldy;
    std::fill(y, y + g.cols, 0.0f);
    for (int64_t k = 0; k < g.nk; ++k) {
      const float a = w[g.kcol[k]];
      const float* x = g.xrow[k];
      for (int64_t j = 0; j < g.cols; ++j) y[j] += a * x[j];
    }
    if (g.done) g.done(g.done_ctx, r, 0, g.cols);
  }
}
}  // namespace

int64_t indexed_gemm_items(const IndexedGemm& g, PackedIsa isa) {
  if (g.nrows <= 0 || g.cols <= 0) return 0;
  switch (isa) {
    case PackedIsa::Avx512:
      return avx512::row_chunks(g) * avx512::col_tiles(g);
    case PackedIsa::Avx2:
      return avx2::row_chunks(g) * avx2::col_tiles(g);
    default:
      return g.nrows;
  }
}

void indexed_gemm_run(const IndexedGemm& g, PackedIsa isa, int64_t i0, int64_t i1) {
  switch (isa) {
    case PackedIsa::Avx512:
      avx512::run_items(g, i0, i1);
      break;
    case PackedIsa::Avx2:
      avx2::run_items(g, i0, i1);
      break;
    default:
      run_plain(g, i0, i1);
      break;
  }
}

}  // namespace frugal::cpu
