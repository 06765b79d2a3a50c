// A naive, obviously-correct float64 evaluator of a frugal::Graph, used by tests
// as the independent reference for executors, folding and the zoo. It shares no
// code with the executors or with shape inference: every op (ONNX semantics,
// opset 13) and every output shape is computed here from first principles.
//
// Supported ops: Conv, BatchNormalization, Relu, Clip, Sigmoid, HardSigmoid,
// HardSwish, LeakyRelu, Mul, Add, Sub, Div, Greater, GreaterOrEqual (1 or 0),
// Where, Cast (float, double, bool, integers), Concat,
// MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool, LRN, Gemm, MatMul,
// Flatten, Reshape, Softmax, Dropout, Identity, Pad (constant, reflect, edge),
// Resize and Upsample (mode nearest), Constant (Conv and pools in 1-D and 2-D). Anything
// else is an Error naming the node.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "frugal/model/graph.h"
#include "tensor/tensor.h"

namespace frugal {

// A dense float64 tensor in C order.
struct RefTensor {
  std::vector<int64_t> dims;
  std::vector<double> data;
};

using RefValues = std::map<std::string, RefTensor>;

// Runs `g` on `inputs` (every graph input that is not an initializer must be
// given, with fully known dims) and returns every graph output.
RefValues reference_run(const Graph& g, const RefValues& inputs);

// Same, but returns every value computed along the way (inputs, initializers
// that nodes read, and every node output): handy for layer-by-layer comparisons.
RefValues reference_run_all(const Graph& g, const RefValues& inputs);

// Conversions from/to the host's float32 tensors and initializers.
RefTensor to_ref(const Tensor& t);
RefTensor to_ref(const TensorDesc& initializer);  // float32/64, int32/64, uint8, int8, bool
Tensor to_float_tensor(const RefTensor& t);

// Deterministic inputs in [-1, 1) for tests (SplitMix64; independent of the zoo's).
RefTensor random_ref_tensor(const std::vector<int64_t>& dims, uint64_t seed);

// max |a - b| and max |a - b| / (|b| + floor) over all elements; Error if the dims differ.
double max_abs_diff(const RefTensor& a, const RefTensor& b);
double max_rel_diff(const RefTensor& a, const RefTensor& b, double floor = 1e-3);

}  // namespace frugal
