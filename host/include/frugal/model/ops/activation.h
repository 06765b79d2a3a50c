// Activations: elementwise functions of one input. Those derived from
// Activation are what the executors run on their own or fuse into the epilogue
// of the layer that produces their input (a Conv, Gemm or BatchNormalization);
// adding one takes a class here, its line in the op list, and its formula in
// each executor's epilogue (plugins/cpu/kernels/epilogue.cpp, shaders/common.glsl).
#pragma once

#include <limits>

#include "frugal/model/op.h"

namespace frugal::ops {

// Values are the epilogue codes of the executors (shaders/common.glsl; 1 is the
// affine map of a bias or a BatchNormalization).
enum class ActivationKind { Relu = 2, Clip = 3, Sigmoid = 4, HardSigmoid = 5, HardSwish = 6, LeakyRelu = 7 };

// y = f(x) elementwise, with up to two parameters (their meaning per kind).
class Activation : public Op {
 public:
  Activation(const Node& n, int64_t opset, ActivationKind kind, float alpha = 0, float beta = 0)
      : Op(n, opset), kind(kind), alpha(alpha), beta(beta) {}
  std::vector<ValueShape> shape(const std::vector<ValueShape>& in) const override;

  const ActivationKind kind;
  float alpha, beta;

  static constexpr FoldClass kFold = FoldClass::NonAffine;
  static constexpr const char* kFoldRule = "activation";
};

// max(x, 0)
class Relu : public Activation {
 public:
  Relu(const Node& n, int64_t opset) : Activation(n, opset, ActivationKind::Relu) {}
};

// 1 / (1 + exp(-x))
class Sigmoid : public Activation {
 public:
  Sigmoid(const Node& n, int64_t opset) : Activation(n, opset, ActivationKind::Sigmoid) {}
};

// min(max(x, alpha), beta). The bounds are attributes min and max before opset
// 11 and scalar inputs 1 and 2 since (then alpha and beta hold the defaults
// -inf and +inf, and executors read the inputs as constants).
class Clip : public Activation {
 public:
  Clip(const Node& n, int64_t opset)
      : Activation(n, opset, ActivationKind::Clip,
                   n.attr_float("min", -std::numeric_limits<float>::infinity()),
                   n.attr_float("max", std::numeric_limits<float>::infinity())) {}
  std::vector<ValueShape> shape(const std::vector<ValueShape>& in) const override;

 private:
  static constexpr float kInf = std::numeric_limits<float>::infinity();
  static float bound(const Node& n, int64_t opset, const char* name, float dflt) {
    return opset < 11 ? n.attr_float(name, dflt) : dflt;
  }
};

// max(0, min(1, alpha x + beta))
class HardSigmoid : public Activation {
 public:
  HardSigmoid(const Node& n, int64_t opset)
      : Activation(n, opset, ActivationKind::HardSigmoid, n.attr_float("alpha", 0.2f),
                   n.attr_float("beta", 0.5f)) {}
};

// x max(0, min(1, x / 6 + 1 / 2))
class HardSwish : public Activation {
 public:
  HardSwish(const Node& n, int64_t opset) : Activation(n, opset, ActivationKind::HardSwish) {}
};

// x >= 0 ? x : alpha x
class LeakyRelu : public Activation {
 public:
  LeakyRelu(const Node& n, int64_t opset)
      : Activation(n, opset, ActivationKind::LeakyRelu, n.attr_float("alpha", 0.01f)) {}
};

// Elementwise ops the host knows (shapes, folder class) but no executor runs:
// Elu, Selu, Tanh.
class Unary : public Op {
 public:
  using Op::Op;
  std::vector<ValueShape> shape(const std::vector<ValueShape>& in) const override;
  static constexpr FoldClass kFold = FoldClass::NonAffine;
  static constexpr const char* kFoldRule = "activation";
};

class Elu : public Unary {
 public:
  using Unary::Unary;
};
class Selu : public Unary {
 public:
  using Unary::Unary;
};
class Tanh : public Unary {
 public:
  using Unary::Unary;
};

}  // namespace frugal::ops
