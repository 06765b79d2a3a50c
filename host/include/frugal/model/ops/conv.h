// Conv: X [N, C, D1, ...] * W [M, C / group, k1, ...] (+ B [M]).
#pragma once

#include "frugal/model/op.h"
#include "frugal/model/ops/window.h"

namespace frugal::ops {

class Conv : public Op {
 public:
  Conv(const Node& n, int64_t opset);
  std::vector<ValueShape> shape(const std::vector<ValueShape>& in) const override;
  bool counts_macs() const override { return true; }
  int64_t macs(const std::vector<ValueShape>& in, const std::vector<ValueShape>& out) const override;

  Window window;
  int64_t group = 1;

  static constexpr FoldClass kFold = FoldClass::Expressive;
  static constexpr const char* kFoldRule =
      "constant float32 W (and B); as a consumer it takes the shift only if it reads no zero padding; groups "
      "map channels per group";
};

}  // namespace frugal::ops
