// Pooling: MaxPool and AveragePool over a sliding window, GlobalAveragePool and
// GlobalMaxPool over every spatial position.
#pragma once

#include "frugal/model/op.h"
#include "frugal/model/ops/window.h"

namespace frugal::ops {

// MaxPool and AveragePool: X [N, C, D1, ...] -> [N, C, O1, ...].
class WindowPool : public Op {
 public:
  WindowPool(const Node& n, int64_t opset);
  std::vector<ValueShape> shape(const std::vector<ValueShape>& in) const override;

  Window window;  // kernel_shape is required
  const std::vector<int64_t>& kernel() const { return *window.kernel_shape; }
};

class MaxPool : public WindowPool {
 public:
  using WindowPool::WindowPool;
  static constexpr FoldClass kFold = FoldClass::CommutesIfScaleNonNegative;
  static constexpr const char* kFoldRule = "needs s >= 0 on every channel; Indices output unused";
};

class AveragePool : public WindowPool {
 public:
  AveragePool(const Node& n, int64_t opset)
      : WindowPool(n, opset), count_include_pad(n.attr_int("count_include_pad", 0) != 0) {}
  bool count_include_pad;
  static constexpr FoldClass kFold = FoldClass::Commutes;
  static constexpr const char* kFoldRule =
      "commutes; scale only (shift must be 0) when count_include_pad=1 and it pads or uses ceil_mode";
};

// GlobalAveragePool and GlobalMaxPool: X [N, C, D1, ...] -> [N, C, 1, ...].
class GlobalPool : public Op {
 public:
  using Op::Op;
  std::vector<ValueShape> shape(const std::vector<ValueShape>& in) const override;
};

class GlobalAveragePool : public GlobalPool {
 public:
  using GlobalPool::GlobalPool;
  static constexpr FoldClass kFold = FoldClass::Commutes;
  static constexpr const char* kFoldRule = "commutes";
};

class GlobalMaxPool : public GlobalPool {
 public:
  using GlobalPool::GlobalPool;
  static constexpr FoldClass kFold = FoldClass::CommutesIfScaleNonNegative;
  static constexpr const char* kFoldRule = "needs s >= 0 on every channel";
};

}  // namespace frugal::ops
