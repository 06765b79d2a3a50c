// A convolution run by oneDNN (libdnnl, when the build found it): the path the
// Conv kernel (kernels/conv.cpp) takes for the layers where oneDNN's blocked
// kernels beat im2col + OpenBLAS (plugins/cpu/README.md, "Kernel paths").
//
// Built once at create time, after the layer's epilogue is complete: for ONE
// sample, primitives made for one thread, with the activations' layouts chosen
// by the library (format_tag::any: nChw16c with AVX-512 kernels, nChw8c with
// AVX2; with several threads a layout whose channel blocks are contiguous,
// blocked rather than brgconv's channels-last), and the weights reordered once
// into the layout asked for. The epilogue's leading per-channel affine map
// (bias, BatchNormalization) is folded into the weights and bias, the
// activations after it become eltwise post-ops, and any step after that runs on
// the host on the NCHW output.
//
// With several threads the layer is cut into one slice of whole output-channel
// blocks per thread, each its own primitive and weights: a call on one sample
// runs the slices side by side on the executor's pool (the input's reorder cut
// likewise), a call on several samples gives whole samples to each pool thread,
// which runs them slice after slice. OpenMP never runs a team (set to one
// thread around every call), so the pool owns the cores. Every sample goes
// through the same slices whatever the batch, so its result does not depend on
// the batch it runs in (plans that split batches stay bit-identical).
//
// Activations stay NCHW in the arena: a sample's input is reordered to the
// blocked layout and the blocked output back, in arena workspace (a slot:
// the scratchpads of the slices running side by side, blocked input, blocked
// output, each at a 64-byte boundary, plus 64 bytes to align the start).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/window.h"
#include "kernels/epilogue.h"
#include "thread_pool.h"

namespace frugal::cpu {

// True when this build runs convolutions through oneDNN.
bool onednn_available();

class OnednnConv {
 public:
  // `weights` [M, C/group, kh, kw], `epilogue` as bundled; `winograd`: a 3x3
  // stride-1 conv takes oneDNN's Winograd kernels where it has them for this
  // machine. Throws frugal::Error when oneDNN has no implementation for this conv.
  OnednnConv(const exec::Window& w, int64_t group, int64_t C, int64_t M, const std::vector<float>& weights,
             const Epilogue& epilogue, int threads, bool winograd);
  ~OnednnConv();
  OnednnConv(const OnednnConv&) = delete;
  OnednnConv& operator=(const OnednnConv&) = delete;

  // Arena workspace of one call on n samples: one sample's slot (with a
  // scratchpad per slice running side by side), or with several threads and
  // samples min(threads, n) one-scratchpad slots (one per pool thread).
  uint64_t workspace_bytes(int64_t n) const;
  // Bytes of the weights and bias as the primitive holds them (repacked, padded).
  uint64_t weight_bytes() const;
  // "oneDNN jit:avx512_core (blocked -> blocked, 2 slices)": implementation, layouts, slices.
  std::string algorithm() const;
  // n samples of x [n, C, H, W] into y [n, M, Ho, Wo]; ws: workspace_bytes().
  void run(const float* x, float* y, int64_t n, void* ws, ThreadPool* pool) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace frugal::cpu
