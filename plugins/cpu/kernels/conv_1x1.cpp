// GCC 12 warns inside its own AVX-512 intrinsics (their self-initialised
// "undefined" vectors) once they are inlined here: not this file's values.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "kernels/conv_1x1.h"

#include <immintrin.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "frugal/error.h"

namespace frugal::cpu {

#pragma GCC push_options
#pragma GCC target("avx512f,avx2,fma")
namespace avx512 {
#include "kernels/simd_avx512.inc"
constexpr int kMaxRows = 12;  // 24 accumulators + 2 input vectors + 1 broadcast of 32 registers
constexpr int kMaxVectors = 2;
#include "kernels/conv_1x1_tile.inc"
}  // namespace avx512
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx2,fma")
namespace avx2 {
#include "kernels/simd_avx2.inc"
constexpr int kMaxRows = 6;  // 12 accumulators + 2 input vectors + 1 broadcast of 16 registers
constexpr int kMaxVectors = 2;
#include "kernels/conv_1x1_tile.inc"
}  // namespace avx2
#pragma GCC pop_options

PackedIsa packed_isa() {
  static const PackedIsa isa = [] {
    PackedIsa cpu = PackedIsa::None;
    if (__builtin_cpu_supports("avx512f"))
      cpu = PackedIsa::Avx512;
    else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
      cpu = PackedIsa::Avx2;
    const char* env = std::getenv("FRUGAL_CPU_MAX_ISA");
    if (!env) return cpu;
    const PackedIsa cap = std::strcmp(env, "none") == 0   ? PackedIsa::None
                          : std::strcmp(env, "avx2") == 0 ? PackedIsa::Avx2
                                                          : PackedIsa::Avx512;
    return std::min(cpu, cap);
  }();
  return isa;
}

Conv1x1::Conv1x1(int64_t M, int64_t K, const float* weights, const Epilogue& epilogue, PackedIsa isa)
    : Conv1x1(M, K, weights, K, 1, 1.0f, isa) {
  set_epilogue(epilogue);
}

Conv1x1::Conv1x1(int64_t M, int64_t K, const float* weights, int64_t m_stride, int64_t k_stride, float scale,
                 PackedIsa isa)
    : M_(M), K_(K), isa_(isa) {
  if (isa == PackedIsa::None) throw Error("Conv1x1 without AVX2 or AVX-512");
  // Blocks of nearly equal rows (M = 16 is two blocks of 8, not 12 + 4).
  const int64_t blocks = blocks_for(M, isa);
  block_row_.resize(size_t(blocks) + 1);
  for (int64_t b = 0; b <= blocks; ++b) block_row_[size_t(b)] = M * b / blocks;
  packed_.resize(size_t(M * K));
  for (int64_t b = 0; b < blocks; ++b) {
    const int64_t m0 = block_row_[size_t(b)], rows = block_row_[size_t(b) + 1] - m0;
    float* dst = packed_.data() + m0 * K;
    for (int64_t k = 0; k < K; ++k)
      for (int64_t r = 0; r < rows; ++r)
        dst[k * rows + r] = scale * weights[(m0 + r) * m_stride + k * k_stride];
  }
}

int64_t Conv1x1::blocks_for(int64_t M, PackedIsa isa) {
  const int64_t max_rows = isa == PackedIsa::Avx512 ? avx512::kMaxRows : avx2::kMaxRows;
  return (M + max_rows - 1) / max_rows;
}

void Conv1x1::set_epilogue(const Epilogue& epilogue) {
  steps_.clear();
  step_data_.clear();
  step_data_.reserve(2 * epilogue.steps().size());  // steps_ point into these vectors
  has_residual_ = epilogue.has_residual();
  for (const Epilogue::Step& s : epilogue.steps()) {
    Step t{s.kind, nullptr, nullptr, s.a, s.b};
    if (s.kind == Epilogue::kAffine) {
      if (int64_t(s.scale.size()) != M_ || int64_t(s.shift.size()) != M_)
        throw Error("Conv1x1: affine step of the wrong size");
      step_data_.push_back(s.scale);
      t.scale = step_data_.back().data();
      step_data_.push_back(s.shift);
      t.shift = step_data_.back().data();
    }
    steps_.push_back(t);
  }
}

void Conv1x1::run(const float* x, int64_t ldx, float* y, int64_t ldy, int64_t cols, int64_t b0, int64_t b1,
                  const float* residual, const float* x_scale) const {
  if (has_residual_ && !residual)
    throw Error("Conv1x1: its epilogue adds a residual operand, and none was given");
  if (isa_ == PackedIsa::Avx512)
    avx512::run_blocks(packed_.data(), block_row_.data(), b0, b1, K_, x, ldx, y, ldy, cols, steps_.data(),
                       int(steps_.size()), has_residual_ ? residual : nullptr, x_scale);
  else
    avx2::run_blocks(packed_.data(), block_row_.data(), b0, b1, K_, x, ldx, y, ldy, cols, steps_.data(),
                     int(steps_.size()), has_residual_ ? residual : nullptr, x_scale);
}

void Conv1x1::run_rows(const float* a, int64_t lda, int64_t rows, float* y, int64_t ldy, int64_t b0,
                       int64_t b1) const {
  if (has_residual_) throw Error("Conv1x1: a residual operand needs run(), not run_rows()");
  if (isa_ == PackedIsa::Avx512)
    avx512::run_rows(packed_.data(), block_row_.data(), b0, b1, K_, a, lda, rows, y, ldy, steps_.data(),
                     int(steps_.size()));
  else
    avx2::run_rows(packed_.data(), block_row_.data(), b0, b1, K_, a, lda, rows, y, ldy, steps_.data(),
                   int(steps_.size()));
}

std::string Conv1x1::algorithm() const {
  return isa_ == PackedIsa::Avx512 ? "1x1 packed avx512 (epilogue in registers)"
                                   : "1x1 packed avx2 (epilogue in registers)";
}

}  // namespace frugal::cpu
