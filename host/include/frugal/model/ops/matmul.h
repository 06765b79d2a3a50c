// Matrix products: Gemm (Y = alpha * A' B' + beta * C, C broadcast to [M, N])
// and MatMul (numpy matmul: 1-D operands promoted, batch dims broadcast).
#pragma once

#include "frugal/model/op.h"

namespace frugal::ops {

class Gemm : public Op {
 public:
  Gemm(const Node& n, int64_t opset)
      : Op(n, opset),
        trans_a(n.attr_int("transA", 0) != 0),
        trans_b(n.attr_int("transB", 0) != 0),
        alpha(n.attr_float("alpha", 1.0f)),
        beta(n.attr_float("beta", 1.0f)) {}
  std::vector<ValueShape> shape(const std::vector<ValueShape>& in) const override;
  bool counts_macs() const override { return true; }
  int64_t macs(const std::vector<ValueShape>& in, const std::vector<ValueShape>& out) const override;

  bool trans_a, trans_b;
  float alpha, beta;

  static constexpr FoldClass kFold = FoldClass::Expressive;
  static constexpr const char* kFoldRule = "transA=0, constant float32 B (and C)";
};

// The geometry of one MatMul: what shape inference and both executors use.
struct MatMulShape {
  int64_t M = 1, N = 1, K = 1;
  std::vector<int64_t> batch;               // broadcast batch dims
  std::vector<int64_t> a_batch, b_batch;    // each operand's batch dims, padded with 1 on the left
  std::vector<int64_t> a_stride, b_stride;  // per batch dim: matrices to the next index (contiguous operands)
  std::vector<int64_t> out;                 // the output dims
  // Throws Error naming the inputs when they do not fit.
  static MatMulShape of(const ValueShape& a, const ValueShape& b);
};

class MatMul : public Op {
 public:
  using Op::Op;
  std::vector<ValueShape> shape(const std::vector<ValueShape>& in) const override;
  bool counts_macs() const override { return true; }
  int64_t macs(const std::vector<ValueShape>& in, const std::vector<ValueShape>& out) const override;

  static constexpr FoldClass kFold = FoldClass::Expressive;
  static constexpr const char* kFoldRule =
      "[M,K] x constant float32 [K,N]; converted to Gemm when it needs a bias";
};

}  // namespace frugal::ops
