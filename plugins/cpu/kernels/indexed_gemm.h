// The gated conv's reduced product (kernels/gated_conv.cpp) without gathering
// weights or building an im2col matrix: y[r, j] = sum_k w[rows[r], kcol[k]] *
// xrow[k][j]. The weights are read where they lie (each active kernel's row,
// at the columns of the active input channels' taps) by broadcasts, and every
// k names its own input row, so that the shifted rows of a padded input plane
// stand for the taps of a conv (docs/GATING.md, "Running gated: the CPU
// executor"). Register tiles of 6 rows x 64 columns (AVX-512) or 4 x 24
// (AVX2); plain loops without either.
#pragma once

#include <cstdint>

#include "kernels/conv_1x1.h"

namespace frugal::cpu {

struct IndexedGemm {
  const float* w = nullptr;  // [*, ldw]: row rows[r] is output row r's weights
  int64_t ldw = 0;
  const int32_t* rows = nullptr;
  int64_t nrows = 0;
  const int32_t* kcol = nullptr;       // [nk]: the weight column of step k
  const float* const* xrow = nullptr;  // [nk]: the input row of step k, cols floats from it
  int64_t nk = 0, cols = 0;
  int64_t kblock = 0;  // steps per block (those whose input columns fit the first-level cache); 0: all
  float* y = nullptr;  // output row r at y + (yrows ? yrows[r] : r) * ldy
  const int32_t* yrows = nullptr;
  int64_t ldy = 0;
  // Called once row r's columns [j0, j0 + n) hold their final sums, by the thread that
  // computed them (the caller's epilogue on them while they are in cache); may be null.
  void (*done)(const void* ctx, int64_t r, int64_t j0, int64_t n) = nullptr;
  const void* done_ctx = nullptr;
};

// The product as work items (tiles of rows x columns) that threads may share.
int64_t indexed_gemm_items(const IndexedGemm& g, PackedIsa isa);
// Items [i0, i1) of the product.
void indexed_gemm_run(const IndexedGemm& g, PackedIsa isa, int64_t i0, int64_t i1);

}  // namespace frugal::cpu
