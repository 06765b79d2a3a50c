// Ops of two or three inputs combined element by element with numpy
// broadcasting: Add, Sub, Mul, Div, the comparisons Greater and GreaterOrEqual
// (bool results), Where (select by a bool condition) and PRelu.
#pragma once

#include "frugal/model/op.h"

namespace frugal::ops {

// The arithmetic of two same-typed inputs; small integer vectors carry their
// values through (shape arithmetic such as batch * channels).
class Arithmetic : public Op {
 public:
  enum class Fn { Add, Sub, Mul, Div };
  Arithmetic(const Node& n, int64_t opset, Fn fn) : Op(n, opset), fn(fn) {}
  std::vector<ValueShape> shape(const std::vector<ValueShape>& in) const override;
  const Fn fn;
};

class Add : public Arithmetic {
 public:
  Add(const Node& n, int64_t opset) : Arithmetic(n, opset, Fn::Add) {}
  static constexpr FoldClass kFold = FoldClass::Sums;
  static constexpr const char* kFoldRule =
      "same rank and channel count on both inputs (broadcast over spatial axes only)";
};

class Sub : public Arithmetic {
 public:
  Sub(const Node& n, int64_t opset) : Arithmetic(n, opset, Fn::Sub) {}
  static constexpr FoldClass kFold = FoldClass::NonAffine;
  static constexpr const char* kFoldRule = "not in the table";
};

class Mul : public Arithmetic {
 public:
  Mul(const Node& n, int64_t opset) : Arithmetic(n, opset, Fn::Mul) {}
  static constexpr FoldClass kFold = FoldClass::NonAffine;
  static constexpr const char* kFoldRule = "not in the table (a gate multiplies two computed values)";
};

class Div : public Arithmetic {
 public:
  Div(const Node& n, int64_t opset) : Arithmetic(n, opset, Fn::Div) {}
  static constexpr FoldClass kFold = FoldClass::NonAffine;
  static constexpr const char* kFoldRule = "not in the table";
};

// A comparison of two same-typed inputs: a bool tensor of their broadcast shape.
class Comparison : public Op {
 public:
  enum class Fn { Greater, GreaterOrEqual };
  Comparison(const Node& n, int64_t opset, Fn fn) : Op(n, opset), fn(fn) {}
  std::vector<ValueShape> shape(const std::vector<ValueShape>& in) const override;
  const Fn fn;
  static constexpr FoldClass kFold = FoldClass::NonAffine;
  static constexpr const char* kFoldRule = "a comparison (bool output)";
};

class Greater : public Comparison {
 public:
  Greater(const Node& n, int64_t opset) : Comparison(n, opset, Fn::Greater) {}
};

class GreaterOrEqual : public Comparison {
 public:
  GreaterOrEqual(const Node& n, int64_t opset) : Comparison(n, opset, Fn::GreaterOrEqual) {}
};

// Where(condition, X, Y): X where the bool condition holds, else Y; all three broadcast.
class Where : public Op {
 public:
  using Op::Op;
  std::vector<ValueShape> shape(const std::vector<ValueShape>& in) const override;
  static constexpr FoldClass kFold = FoldClass::NonAffine;
  static constexpr const char* kFoldRule = "selects between two values";
};

// PRelu(X, slope): slope broadcasts to X; the output has X's shape.
class PRelu : public Op {
 public:
  using Op::Op;
  std::vector<ValueShape> shape(const std::vector<ValueShape>& in) const override;
  static constexpr FoldClass kFold = FoldClass::NonAffine;
  static constexpr const char* kFoldRule = "activation";
};

}  // namespace frugal::ops
