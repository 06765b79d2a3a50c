// 1x1 stride-1 convolutions on NCHW activations without OpenBLAS: the weights
// packed once (blocks of up to 12 output channels, AVX-512, or 6, AVX2, each
// stored k-major so that one broadcast per channel and k feeds the block's
// columns), a register tile of those channels x 32 (AVX-512) or 16 (AVX2)
// output columns summed over all K input channels with FMAs straight from the
// input rows, and the layer's whole epilogue (bias/BN, Relu, Clip, Swish,
// Sigmoid, ...) applied to the tile in registers before it is stored once.
// Against sgemm + a separate epilogue pass this drops OpenBLAS's packing of
// both operands on every call (the weights of MobileNet-v2's and
// EfficientNet-B0's late 1x1 convs are many times their 7x7 or 14x14 inputs)
// and the second pass over the output. No workspace. The instruction set is
// chosen at run time (the build does not assume it); the environment variable
// FRUGAL_CPU_MAX_ISA=avx2 or =none lowers it (tests, comparisons).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kernels/epilogue.h"

namespace frugal::cpu {

enum class PackedIsa { None, Avx2, Avx512 };

// The widest instruction set this process uses for the packed kernels:
// the CPU's, lowered by FRUGAL_CPU_MAX_ISA ("none", "avx2", "avx512").
PackedIsa packed_isa();

class Conv1x1 {
 public:
  // weights: [M, K] row-major. The epilogue's steps are copied.
  Conv1x1(int64_t M, int64_t K, const float* weights, const Epilogue& epilogue, PackedIsa isa);
  // The weights alone, packed straight from where they lie (no float copy
  // first): w[m, k] = scale * weights[m * m_stride + k * k_stride], so a Gemm's
  // B as stored, transposed or not, with alpha folded in. set_epilogue before
  // the first run.
  Conv1x1(int64_t M, int64_t K, const float* weights, int64_t m_stride, int64_t k_stride, float scale,
          PackedIsa isa);
  // Copies the epilogue's steps (those of a layer complete once its bundled
  // nodes are known); replaces any set before.
  void set_epilogue(const Epilogue& epilogue);

  // Blocks of output channels (the unit of the weights' packing): threads
  // split a run by ranges of blocks.
  int64_t blocks() const { return int64_t(block_row_.size()) - 1; }
  // The blocks M output channels make on `isa` (up to 12 rows each on AVX-512, 6 on AVX2).
  static int64_t blocks_for(int64_t M, PackedIsa isa);
  // True when run() with an x_scale pays on M output channels: each block
  // scales the input rows again, and past 4 blocks that cost more than a
  // separate Mul's pass (EfficientNet-B0, batch 1: its 1x1 convs to 80-320
  // channels on 14x14 and 7x7 planes took 0.005-0.023 ms longer each, their
  // Muls 0.005-0.010 ms; those to 16-40 channels on 28x28 to 112x112 planes
  // 0.007-0.014 ms longer, their Muls 0.012-0.034 ms).
  static bool takes_input_scale(int64_t M, PackedIsa isa) {
    return isa != PackedIsa::None && blocks_for(M, isa) <= 4;
  }
  int64_t block_row(int64_t b) const { return block_row_[size_t(b)]; }

  // y[m, j] = epilogue_m(sum_k w[m, k] * x[k, j]) for the channels of blocks
  // [b0, b1) and columns j in [0, cols); x rows are ldx floats apart, y rows ldy.
  // An epilogue with a residual step (EpilogueSteps::kResidual) adds
  // residual[m * ldy + j] there: the residual operand laid out as y. With
  // x_scale, x[k, j] is read as x[k, j] * x_scale[k] (a squeeze-and-excite
  // scale joined to the conv: the same float products the Mul would store).
  void run(const float* x, int64_t ldx, float* y, int64_t ldy, int64_t cols, int64_t b0, int64_t b1,
           const float* residual = nullptr, const float* x_scale = nullptr) const;

  // The same weights as a fully connected layer: y[j, m] = epilogue_m(sum_k w[m, k]
  // * a[j, k]) for rows j in [0, rows) of a (lda floats apart; y rows ldy) and the
  // channels of blocks [b0, b1). The block's channels in the lanes, rows of a in
  // groups of 8, each group one pass over the weights; every output is one chain
  // of FMAs over k in order, so a row's values do not depend on the row count.
  void run_rows(const float* a, int64_t lda, int64_t rows, float* y, int64_t ldy, int64_t b0,
                int64_t b1) const;

  uint64_t weight_bytes() const { return packed_.size() * sizeof(float); }
  std::string algorithm() const;

  // The epilogue as the tile code reads it (public for the ISA files).
  struct Step {
    int kind;
    const float* scale;
    const float* shift;
    float a, b;
  };

 private:
  int64_t M_, K_;
  PackedIsa isa_;
  std::vector<int64_t> block_row_;  // first channel of each block, then M
  std::vector<float> packed_;       // per block: [K][rows of the block]
  std::vector<std::vector<float>> step_data_;
  std::vector<Step> steps_;
  bool has_residual_ = false;
};

}  // namespace frugal::cpu
