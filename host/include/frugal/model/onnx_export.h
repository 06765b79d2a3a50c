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
// WeightsAs::HostAddresses writes initializers of 4 KiB and more as references
// to g's own bytes (tensor_pb.h, kHostMemoryLocation) instead: only for a
// plugin that offers FRUGAL_EXT_HOST_WEIGHTS, and only while g lives unchanged.
// WeightsAs::Omitted writes them with no bytes and no address: the model's
// structure only, for a fingerprint that hashes the weights separately.
enum class WeightsAs { Bytes, HostAddresses, Omitted };
std::string save_onnx_bytes(const Graph& g, WeightsAs weights = WeightsAs::Bytes);

// save_onnx_bytes written to `path`; throws Error naming the path on failure.
void save_onnx_file(const Graph& g, const std::string& path);

}  // namespace frugal
