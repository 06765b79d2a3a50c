// The depthwise convolution (one input channel per group, any channel
// multiplier) of the Conv kernel (kernels/conv.cpp), one output plane per
// (sample, output channel).
//
// On AVX-512, 3x3 and 5x5 at stride 1 or 2 (no dilation) padded by K / 2 at
// the top and left take strips of 16 output columns, each from the top row to
// the bottom one, reading the input plane in place (no copy, no workspace):
// an input row's part under the strip is loaded once per strip (masked loads;
// columns past the row and rows outside the plane read as zeros), its K tap
// columns built in registers (stride 1: `valignd` with the neighbouring
// vectors; stride 2: the even and odd columns of two loads by `vpermt2ps`, the
// ones to their left and right shifted in), K rows held while the strip's
// output rows pass down over them, each output vector summed over its tap
// rows apart and then in order, the layer's epilogue (the forms below) applied
// before a masked store; the columns the next strip (or the next plane) reads
// are prefetched row by row. Stride-1 planes at most kInterleaveMaxWo wide keep
// the channel-interleaved path; stride-2 ones take the strips unless the
// epilogue has a Swish or a step not compiled as such (prepare()). The paths
// below are the AVX2 machines' (FRUGAL_CPU_DW_STRIPS=0 also selects them).
//
// The common KxK cases (K 3 or 5, stride 1 or 2, no dilation: MobileNet's and
// EfficientNet's) first copy the input plane into a zero-padded one in arena
// workspace, split by column parity at stride 2, so that every tap of a row
// of outputs reads a contiguous, always-valid run of floats: rows of 16
// outputs, each summed over all K*K taps in registers, with no edge cases
// (the columns past the plane's width are computed and dropped), 3x3: two
// output rows per pass (they share the loads of the padded rows they have in
// common; 5x5 one: 25 weights and twice 5 sums would not fit the registers),
// and the layer's epilogue applied to them in registers before they are stored
// (BN, BN + Relu, BN + Clip and BN + Swish compiled as such, the channel's
// scale and shift held for the plane). 3x3 at stride 2, where the copy cost
// more than it saved, reads the input directly with all taps per output: runs
// of 16 outputs as one vector where the row holds their inputs (the even, odd
// and next-even columns shuffled from two pairs of loads), edge columns
// checked one by one; others tap by tap on the input. Those two need no
// workspace.
//
// Planes at most kInterleaveMaxWo outputs wide (EfficientNet's and
// MobileNet's 7x7), whose rows would fill at most half of the 16 lanes, put
// 16 channels in the lanes instead: 16 input planes are transposed (16x16 in
// registers) into a channel-interleaved zero-padded buffer [rows, cols, 16] in
// arena workspace, every output pixel is summed over its K*K taps for the 16
// channels at once, the epilogue applied per lane in registers, and 16 pixels
// at a time transposed back into the 16 NCHW output planes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/window.h"
#include "kernels/epilogue.h"
#include "thread_pool.h"

namespace frugal::cpu {

class DepthwiseConv {
 public:
  // `weights` [M, 1, kh, kw]; M a multiple of C.
  DepthwiseConv(const exec::Window& w, int64_t C, int64_t M, std::vector<float> weights, int threads);

  // With the layer's epilogue complete: where both the strips and the
  // channel-interleaved path take the conv (stride 2 to planes at most
  // kInterleaveMaxWo wide, AVX-512), the strips unless the epilogue has a
  // Swish or a step the plane kernels do not compile (they would run it on 16
  // lanes for a row's few outputs; the interleaved path fills the lanes).
  void prepare(const Epilogue& e);
  // Arena workspace of a call on n samples: one padded plane (interleaved:
  // one buffer of 16 padded planes) per thread that takes planes (blocks of
  // 16 channels), min(threads, n * M) (n * ceil(M / 16)) of them.
  uint64_t workspace_bytes(int64_t n) const;
  // The widest output plane the channel-interleaved path takes: on 14x14
  // planes (14 of 16 lanes used) the transposes cost more than they saved.
  static constexpr int64_t kInterleaveMaxWo = 8;
  std::string algorithm() const;
  // x [n, C, H, W] into y [n, M, Ho, Wo], then `epilogue` on each plane.
  void run(const float* x, float* y, int64_t n, float* ws, const Epilogue& epilogue, ThreadPool* pool) const;

 private:
  void run_interleaved(const float* x, float* y, int64_t n, float* ws, const Epilogue& e,
                       ThreadPool* pool) const;
  void plane(const float* x, float* out, const float* wm, float* ws, const Epilogue& e, int64_t m) const;
  // Floats of one padded plane, a multiple of 16 (64 bytes): a chunk the
  // arena places at the top end is rounded down to 64 bytes, and a workspace
  // of another size could leave it a few bytes short of the hole it should
  // fill (EfficientNet-B0 then moved a 4.8 MB tensor at batch 1).
  // Interleaved: Hp rows of Wq columns of 16 channels.
  int64_t plane_floats() const {
    return interleaved_ ? Hp_ * Wq_ * 16 : (int64_t(S_) * Hp_ * Wq_ + 15) / 16 * 16;
  }

  exec::Window w_;
  int64_t C_ = 0, M_ = 0;
  int threads_ = 1;
  std::vector<float> weight_;     // [M, kh * kw]
  int K_ = 0, S_ = 0;             // the padded path's kernel size and stride; 0: tap by tap
  int64_t Hp_ = 0, Wq_ = 0;       // padded rows, and floats per row of each column-parity part
  int64_t Wv_ = 0;                // output columns computed per row: Wo rounded up to 16
  bool direct_3x3s2_ = false;     // 3x3 at stride 2: one pass on the input, no workspace
  std::vector<float> zero_row_;   // that pass's rows in the padding
  std::vector<int64_t> lo_, hi_;  // per kernel column j: the output columns [lo, hi) inside the input
  bool interleaved_ = false;      // 16 channels in the lanes; Hp_, Wq_: the buffer's rows and columns
  bool strips_ = false;           // 3x3/5x5 stride 1 or 2, wider planes: strips of 16 columns, no workspace
  std::vector<float> weight_il_;  // [ceil(M / 16), kh * kw, 16], lanes past M zero
};

}  // namespace frugal::cpu
