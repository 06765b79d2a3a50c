// Ops that move, select or relabel values: Flatten, Reshape, Concat, Transpose,
// Squeeze, Unsqueeze, Pad, Gather, Shape, Constant, Identity, Dropout (inference:
// identity) and Cast.
#pragma once

#include <optional>
#include <string>

#include "frugal/model/op.h"

namespace frugal::ops {

class Flatten : public Op {
 public:
  Flatten(const Node& n, int64_t opset) : Op(n, opset), axis(n.attr_int("axis", 1)) {}
  std::vector<ValueShape> shape(const std::vector<ValueShape>& in) const override;
  int64_t axis;
  static constexpr FoldClass kFold = FoldClass::ChannelRemap;
  static constexpr const char* kFoldRule =
      "axis 1: channel c becomes the block of H*W features [c*H*W, (c+1)*H*W)";
};

// Reshape(data, shape): the target shape is input 1, a constant (or computed from Shape).
class Reshape : public Op {
 public:
  Reshape(const Node& n, int64_t opset) : Op(n, opset), allowzero(n.attr_int("allowzero", 0) != 0) {}
  std::vector<ValueShape> shape(const std::vector<ValueShape>& in) const override;
  // The output dims for input dims `x` and target `want` (0 copies x's dim unless allowzero; one -1 is
  // inferred).
  std::vector<int64_t> resolve(const ValueShape& x, const std::vector<int64_t>& want) const;
  bool allowzero;
  static constexpr FoldClass kFold = FoldClass::ChannelRemap;
  static constexpr const char* kFoldRule =
      "batch kept and channels regrouped in order (flatten, unflatten, merging spatial axes)";
};

class Concat : public Op {
 public:
  Concat(const Node& n, int64_t opset);
  std::vector<ValueShape> shape(const std::vector<ValueShape>& in) const override;
  int64_t axis;
  static constexpr FoldClass kFold = FoldClass::ChannelRemap;
  static constexpr const char* kFoldRule =
      "axis 1: each input owns a channel range; other axes: every input carries the same map";
};

class Transpose : public Op {
 public:
  Transpose(const Node& n, int64_t opset) : Op(n, opset) {
    if (n.has_attr("perm")) perm = n.attr_ints("perm", {});
  }
  std::vector<ValueShape> shape(const std::vector<ValueShape>& in) const override;
  std::optional<std::vector<int64_t>> perm;  // default: reversed axes
  static constexpr FoldClass kFold = FoldClass::NonAffine;
  static constexpr const char* kFoldRule = "moves the channel axis";
};

// Squeeze and Unsqueeze: axes are an attribute before opset 13, input 1 since.
class Squeeze : public Op {
 public:
  Squeeze(const Node& n, int64_t opset) : Op(n, opset) {
    if (n.has_attr("axes")) axes = n.attr_ints("axes", {});
  }
  std::vector<ValueShape> shape(const std::vector<ValueShape>& in) const override;
  std::optional<std::vector<int64_t>> axes;  // the attribute, when given
  static constexpr FoldClass kFold = FoldClass::NonAffine;
  static constexpr const char* kFoldRule = "changes the rank";
};

class Unsqueeze : public Squeeze {
 public:
  using Squeeze::Squeeze;
  std::vector<ValueShape> shape(const std::vector<ValueShape>& in) const override;
};

// Pad(data, pads, constant_value): pads are an attribute before opset 11, input 1 since.
class Pad : public Op {
 public:
  Pad(const Node& n, int64_t opset) : Op(n, opset), mode(n.attr_string("mode", "constant")) {
    if (n.has_attr("pads")) pads = n.attr_ints("pads", {});
  }
  std::vector<ValueShape> shape(const std::vector<ValueShape>& in) const override;
  std::string mode;
  std::optional<std::vector<int64_t>> pads;  // the attribute, when given
  static constexpr FoldClass kFold = FoldClass::Commutes;
  static constexpr const char* kFoldRule =
      "reflect/edge commute; constant 0 passes the scale only; padding axis 0 or 1 is a boundary";
};

class Gather : public Op {
 public:
  Gather(const Node& n, int64_t opset) : Op(n, opset), axis(n.attr_int("axis", 0)) {}
  std::vector<ValueShape> shape(const std::vector<ValueShape>& in) const override;
  int64_t axis;
  static constexpr FoldClass kFold = FoldClass::NonAffine;
  static constexpr const char* kFoldRule = "selects values";
};

class Shape : public Op {
 public:
  Shape(const Node& n, int64_t opset) : Op(n, opset), start(n.attr_int("start", 0)) {
    if (n.has_attr("end")) end = n.attr_int("end", 0);
  }
  std::vector<ValueShape> shape(const std::vector<ValueShape>& in) const override;
  int64_t start;
  std::optional<int64_t> end;  // default: the rank
  static constexpr FoldClass kFold = FoldClass::NonAffine;
  static constexpr const char* kFoldRule = "reads the shape only";
};

class Constant : public Op {
 public:
  Constant(const Node& n, int64_t opset);
  std::vector<ValueShape> shape(const std::vector<ValueShape>& in) const override;
  static constexpr FoldClass kFold = FoldClass::NonAffine;
  static constexpr const char* kFoldRule = "a constant cannot change";

 private:
  ValueShape value_;
};

class Identity : public Op {
 public:
  using Op::Op;
  std::vector<ValueShape> shape(const std::vector<ValueShape>& in) const override;
  static constexpr FoldClass kFold = FoldClass::Commutes;
  static constexpr const char* kFoldRule = "commutes";
};

// Dropout(data, ratio, training_mode) -> output, mask. Inference: the identity.
class Dropout : public Op {
 public:
  Dropout(const Node& n, int64_t opset)
      : Op(n, opset), is_test(opset >= 7 || n.attr_int("is_test", 0) != 0) {}
  std::vector<ValueShape> shape(const std::vector<ValueShape>& in) const override;
  bool is_test;  // attribute is_test before opset 7; true from 7 (training_mode is input 2)
  static constexpr FoldClass kFold = FoldClass::Commutes;
  static constexpr const char* kFoldRule = "identity at inference (mask output unused)";
};

// Cast(input) to the dtype of attribute `to`.
class Cast : public Op {
 public:
  Cast(const Node& n, int64_t opset);
  std::vector<ValueShape> shape(const std::vector<ValueShape>& in) const override;
  DType to;
  static constexpr FoldClass kFold = FoldClass::NonAffine;
  static constexpr const char* kFoldRule = "changes the dtype";
};

}  // namespace frugal::ops
