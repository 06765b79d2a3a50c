// Sliding-window geometry of Conv and the pooling ops: kernel, strides,
// dilations, pads (explicit or auto_pad), output size, ceil_mode. 1-D windows
// are 2-D windows of height 1. (The same rules as the cpu executor's window.h;
// phase 2 moves both into a shared library.)
#pragma once

#include <cstdint>

#include "vk_kernel.h"

namespace frugal::vk {

struct Window {
  int64_t H = 1, W = 1;
  int64_t kh = 1, kw = 1;
  int64_t sh = 1, sw = 1;
  int64_t dh = 1, dw = 1;
  int64_t pt = 0, pl = 0, pb = 0, pr = 0;
  int64_t Ho = 1, Wo = 1;
  int spatial_rank = 2;

  // Reads strides, dilations, pads / auto_pad and ceil_mode of the node for
  // the given input dims and kernel; fails naming the node.
  static Window from_node(const KernelSpec& s, const Dims& input, const Dims& kernel, bool allow_ceil_mode);
};

}  // namespace frugal::vk
