// What one op is, defined once for the host and every plugin: its attributes,
// parsed and checked when the op is made from a node; its shape function; its
// multiply-accumulate count; and how it treats a per-channel affine map (the
// folder's class). Each op is a class in frugal/model/ops/ named after its ONNX
// type (ops::Conv, ops::Relu, ...); the registry (ops.h) makes them from nodes.
// Executors build their kernels from these objects, so no backend parses an
// attribute again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "frugal/model/graph.h"

namespace frugal {

// One node input or output as a shape function sees it: concrete dims, dtype,
// and for small tensors whose values are known when shapes are inferred
// (initializers, Constant nodes, Shape results) the values themselves, so that
// Reshape(x, Concat(Shape(x)[0], -1)) and Resize(x, scales) resolve.
struct ValueShape {
  std::string name;  // empty: optional input omitted
  bool present = false;
  std::vector<int64_t> dims;
  DType dtype = DType::Undefined;
  std::optional<std::vector<int64_t>> ints;   // integer values
  std::optional<std::vector<double>> floats;  // floating-point values
};

// How an op treats a per-channel affine map m(x) = s * x + t arriving on its
// input (BatchNorm folding, docs/FOLDING.md); the folder refines it per node.
enum class FoldClass {
  Expressive,                  // y = W x + b with constant W, b: absorbs any map on either side
  Commutes,                    // op(s x + t) = s op(x) + t, channels unchanged
  CommutesIfScaleNonNegative,  // max(s x + t) = s max(x) + t only where s >= 0 (else max turns into min)
  CommutesScaleOnly,           // reads zero padding: op(s x + t) = s op(x) + t only where t = 0
  Sums,                        // Add: s (u + v) + t = (s u + t) + s v: the shift goes into one input only
  ChannelRemap,                // Flatten, Reshape, Concat: channels move to other feature positions
  NonAffine,                   // ReLU, Sigmoid, ...: a boundary the map cannot cross
};

// The base of every op. Constructors take the node and the model's default-domain
// opset, read every attribute the op has and throw Error for a bad one (without
// naming the node: callers prefix "<Op> node '<name>': ").
class Op {
 public:
  Op(const Node& n, int64_t opset) : op_type_(n.op_type), opset_(opset), num_outputs_(n.outputs.size()) {}
  virtual ~Op() = default;

  // Output shapes, one per node output (omitted optional outputs included), for
  // these inputs (one per node input). Throws Error for inputs that do not fit.
  virtual std::vector<ValueShape> shape(const std::vector<ValueShape>& in) const = 0;
  // True for ops whose cost is multiply-accumulates (Conv, Gemm, MatMul); the
  // others count 0 and need no shapes to say so.
  virtual bool counts_macs() const { return false; }
  // Multiply-accumulates of one execution at these shapes.
  virtual int64_t macs(const std::vector<ValueShape>& in, const std::vector<ValueShape>& out) const {
    return 0;
  }

  const std::string& op_type() const { return op_type_; }
  int64_t opset() const { return opset_; }
  size_t num_outputs() const { return num_outputs_; }

 protected:
  // `outs` padded to one per node output: those not given copy the first (without values).
  std::vector<ValueShape> outputs(std::vector<ValueShape> outs) const;

 private:
  std::string op_type_;
  int64_t opset_;
  size_t num_outputs_;
};

}  // namespace frugal
