// The ONE table of ops the host understands: for each, a shape function (used by
// shape inference) and a MAC count (used by macs.h, the predictor and reports).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "frugal/model/graph.h"

namespace frugal {

// True for ops in the table (ONNX default domain).
bool op_is_known(const std::string& op_type);
// Names of all ops in the table, sorted.
std::vector<std::string> known_ops();
// Every node whose op is not known (or whose domain is not the ONNX default),
// as "OpType (node 'name')" strings, all of them, in graph order.
std::vector<std::string> unknown_op_nodes(const Graph& g);

// ---- What the table holds (used by shape_inference.cpp and macs.cpp) --------

// One node input or output as a shape function sees it: concrete dims, dtype,
// and for small integer tensors whose values are known at inference time
// (initializers, Constant nodes, Shape results) the values themselves, so that
// Reshape(x, Concat(Shape(x)[0], -1)) resolves.
struct ValueShape {
  std::string name;  // empty: optional input omitted
  bool present = false;
  std::vector<int64_t> dims;
  DType dtype = DType::Undefined;
  std::optional<std::vector<int64_t>> ints;
};

// Returns one ValueShape per node output (omitted optional outputs included).
// Throws Error with a message that does not repeat the node (the caller prefixes
// "<Op> node '<name>': ").
using ShapeFn = std::vector<ValueShape> (*)(const Node& n, const std::vector<ValueShape>& in);
// Multiply-accumulates of one execution at the given shapes.
using MacFn = int64_t (*)(const Node& n, const std::vector<ValueShape>& in,
                          const std::vector<ValueShape>& out);

struct OpDef {
  const char* op_type;
  ShapeFn shape;
  MacFn macs;
};

// The table entry for `n` (checks the domain too), or nullptr.
const OpDef* find_op(const Node& n);

}  // namespace frugal
