// Graph -> ONNX model (serialized ModelProto), the inverse of onnx_import.
#pragma once

#include <string>

#include "frugal/model/graph.h"

namespace frugal {

// Serializes `g`. Initializers are written as raw_data in initializer_order
// (then any others, by name); value_info lists every tensor that is neither
// input, output nor initializer and has a dtype, shape or doc string. For IR version < 4
// initializers are also listed as graph inputs, as those versions require.
// Throws Error naming the tensor when an initializer's shape is not known.
std::string save_onnx_bytes(const Graph& g);

// save_onnx_bytes written to `path`; throws Error naming the path on failure.
void save_onnx_file(const Graph& g, const std::string& path);

}  // namespace frugal
