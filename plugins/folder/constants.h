// Constant tensors as the folder sees them: initializers, or outputs of Constant
// nodes. BN parameters and the weights of expressive layers must be constant for
// a fold to be exact, so every reader goes through here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "frugal/model/graph.h"

namespace frugal::folding {

struct ConstantTensor {
  std::vector<int64_t> dims;
  std::vector<double> values;  // converted from float32 / float64
};

// The float value of `name` when it is an initializer or a Constant node's
// output with a float32/float64 tensor; nullopt otherwise (computed values,
// integer tensors, graph inputs).
std::optional<ConstantTensor> constant_floats(const Graph& g, const std::string& name);

// Dims of a constant tensor (any dtype), without copying its values.
std::optional<std::vector<int64_t>> constant_dims(const Graph& g, const std::string& name);

// True when `name` is a float32 initializer or Constant output: the only kind of
// weight the folder rewrites (it writes float32 back).
bool is_float32_constant(const Graph& g, const std::string& name);

// How many (node, input slot) pairs read `name`, plus one if it is a graph output.
int use_count(const Graph& g, const std::string& name);

}  // namespace frugal::folding
