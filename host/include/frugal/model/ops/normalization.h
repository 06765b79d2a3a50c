// Normalisations: BatchNormalization (inference form: an affine map per
// channel), LRN across channels, Softmax and LogSoftmax along an axis.
#pragma once

#include "frugal/model/op.h"

namespace frugal::ops {

// X [N, C, ...] with scale, B, mean, var [C].
class BatchNormalization : public Op {
 public:
  BatchNormalization(const Node& n, int64_t opset);
  std::vector<ValueShape> shape(const std::vector<ValueShape>& in) const override;

  float epsilon;
  bool training_mode;  // attribute training_mode (opset 14)
  bool is_test;        // attribute is_test before opset 7 (inference); true from opset 7
  bool spatial;        // attribute spatial before opset 9 (false: per value, not per channel); true from 9

  static constexpr FoldClass kFold = FoldClass::NonAffine;
  static constexpr const char* kFoldRule =
      "another BN is a boundary for this one; the folder folds it on its own and iterates";
};

// y = x / (bias + alpha / size * sum of x^2 over `size` neighbouring channels)^beta
class LRN : public Op {
 public:
  LRN(const Node& n, int64_t opset);
  std::vector<ValueShape> shape(const std::vector<ValueShape>& in) const override;

  int64_t size;
  float alpha, beta, bias;

  static constexpr FoldClass kFold = FoldClass::NonAffine;
  static constexpr const char* kFoldRule = "normalises across channels";
};

// Softmax and LogSoftmax. From opset 13 along `axis` (default -1); before, the
// input is seen as 2-D [prod(dims[:axis]), prod(dims[axis:])] (default axis 1)
// and each row is normalised (`coerce_2d`).
class SoftmaxBase : public Op {
 public:
  SoftmaxBase(const Node& n, int64_t opset)
      : Op(n, opset), coerce_2d(opset < 13), axis(n.attr_int("axis", opset < 13 ? 1 : -1)) {}
  std::vector<ValueShape> shape(const std::vector<ValueShape>& in) const override;

  bool coerce_2d;
  int64_t axis;

  static constexpr FoldClass kFold = FoldClass::NonAffine;
  static constexpr const char* kFoldRule = "activation";
};

class Softmax : public SoftmaxBase {
 public:
  using SoftmaxBase::SoftmaxBase;
};

class LogSoftmax : public SoftmaxBase {
 public:
  using SoftmaxBase::SoftmaxBase;
};

}  // namespace frugal::ops
