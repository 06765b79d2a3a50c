// The sliding window of Conv and the pooling ops: kernel, strides, dilations,
// pads (explicit or auto_pad) and ceil_mode, read once from the node, and the
// one geometry (output size and padding per spatial axis) that shape inference
// and both executors use.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "frugal/model/op.h"

namespace frugal::ops {

struct Window {
  std::optional<std::vector<int64_t>> kernel_shape;  // the attribute, when given
  std::vector<int64_t> strides, dilations, pads;     // as given; empty: 1, 1 and 0 on every axis
  std::string auto_pad = "NOTSET";
  bool ceil_mode = false;

  // Reads the window attributes of `n` (ceil_mode only when `pooling`).
  Window(const Node& n, bool pooling);

  // One spatial axis of a window over an input.
  struct Axis {
    int64_t in = 1, kernel = 1, stride = 1, dilation = 1;
    int64_t pad_begin = 0, pad_end = 0;  // pad_begin: top or left
    int64_t out = 1;
  };
  // The geometry over input `x` ([N, C, D1, ...]) with kernel extents `kernel`
  // (one per spatial axis). Throws Error naming the attribute or input at fault,
  // and for sizes that overflow int64.
  std::vector<Axis> geometry(const ValueShape& x, const std::vector<int64_t>& kernel) const;
};

}  // namespace frugal::ops
