// The sliding window of a Conv or pooling node as both executors' kernels use
// it: 2-D (1-D windows are 2-D windows of height 1), its geometry computed once
// by the model library (frugal/model/ops/window.h) from the attributes the op
// read.
#pragma once

#include <cstdint>
#include <vector>

#include "common/kernel_spec.h"

namespace frugal::exec {

struct Window {
  int64_t H = 1, W = 1;  // input spatial size
  int64_t kh = 1, kw = 1;
  int64_t sh = 1, sw = 1;
  int64_t dh = 1, dw = 1;
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;  // top, left, bottom, right
  int64_t Ho = 1, Wo = 1;
  int spatial_rank = 2;  // 1 or 2

  // The window of node s (an ops::Conv or ops::WindowPool) over `input` with
  // kernel extents `kernel` (from the weights for Conv, kernel_shape for pools);
  // unsupported() beyond 2-D, fails naming the node when they do not fit.
  static Window from_node(const KernelSpec& s, const Dims& input, const Dims& kernel);

  // Output columns ow whose input column ow*sw - pl + j*dw lies inside [0, W): [lo, hi).
  void valid_cols(int64_t j, int64_t& lo, int64_t& hi) const;
};

// What a Conv node says, checked: weights W [M, C/group, k...] (constant), the
// window over input X, group, channel counts, and bias B (empty when absent).
// Both executors' conv kernels start from this.
struct ConvShape {
  std::vector<float> weights;
  Window window;
  int64_t group = 1, C = 0, M = 0, Cg = 0, Mg = 0;  // channels in / out, per group
  std::vector<float> bias;

  // Fails naming the node when W, kernel_shape, group or B do not fit X.
  static ConvShape from_spec(const KernelSpec& s);
};

}  // namespace frugal::exec
