// Resize (opset 10: X, scales; from 11: X, roi, scales, sizes) and the older
// Upsample (X, scales). Output dims are `sizes` when given, else
// floor(dim * scale) (for tf_crop_and_resize: floor(dim * (roi_end - roi_start) * scale)).
#pragma once

#include <string>

#include "frugal/model/op.h"

namespace frugal::ops {

class Resize : public Op {
 public:
  Resize(const Node& n, int64_t opset);
  std::vector<ValueShape> shape(const std::vector<ValueShape>& in) const override;

  std::string mode;                            // nearest, linear, cubic
  std::string coordinate_transformation_mode;  // half_pixel (asymmetric before opset 11)
  std::string nearest_mode;                    // round_prefer_floor, round_prefer_ceil, floor, ceil
  float cubic_coeff_a, extrapolation_value;
  bool exclude_outside;

  // Input slots of scales and sizes (roi is 1 from opset 11).
  size_t scales_input() const { return opset() < 11 ? 1 : 2; }
  size_t sizes_input() const { return 3; }

  static constexpr FoldClass kFold = FoldClass::Commutes;
  static constexpr const char* kFoldRule =
      "mode nearest, batch and channel axes unchanged (constant scales or sizes); not tf_crop_and_resize";
};

class Upsample : public Op {
 public:
  Upsample(const Node& n, int64_t opset);
  std::vector<ValueShape> shape(const std::vector<ValueShape>& in) const override;

  std::string mode;           // nearest, linear
  std::vector<float> scales;  // the attribute (opset 7 and 8); else input 1

  static constexpr FoldClass kFold = FoldClass::Commutes;
  static constexpr const char* kFoldRule = "mode nearest, batch and channel scales 1 (constant scales)";
};

}  // namespace frugal::ops
