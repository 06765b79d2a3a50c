// Resize with mode "nearest", as both executors run it: every output value
// copies one input value, chosen per spatial axis by the coordinate
// transformation and nearest_mode of the node (the ONNX rules, computed in
// double once when compiling). Batch and channel axes keep their size.
#pragma once

#include <cstdint>
#include <vector>

#include "common/kernel_spec.h"

namespace frugal::exec {

struct ResizeNearest {
  int64_t planes = 1;           // batch x channels at the declared batch
  int64_t in_plane = 1;         // input values per (sample, channel)
  std::vector<int64_t> source;  // per output position in a plane: its input position in the plane

  // unsupported() for other modes, tf_crop_and_resize, or resizing axis 0 or 1;
  // the scales or sizes must be constants.
  static ResizeNearest from_spec(const KernelSpec& s);
};

// The input index an output index maps to along one axis (ONNX Resize, nearest).
int64_t nearest_index(int64_t out_index, int64_t in_size, int64_t out_size, double scale,
                      const std::string& coordinate_mode, const std::string& nearest_mode);

}  // namespace frugal::exec
