// Sliding-window geometry shared by Conv and the pooling ops: kernel, strides,
// dilations, pads (explicit or auto_pad), output size, ceil_mode. 1-D windows
// are 2-D windows of height 1. Used by both executors.
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

  // Reads kernel (given: from the weights for Conv, kernel_shape for pools),
  // strides, dilations, pads / auto_pad and ceil_mode of the node; fails naming the node.
  static Window from_node(const KernelSpec& s, const Dims& input, const Dims& kernel, bool allow_ceil_mode);

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
