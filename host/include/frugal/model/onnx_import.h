// ONNX model -> Graph, through the official protobuf schema (libonnx-dev).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "frugal/model/graph.h"

namespace frugal {

// Loads a model file. Every failure is a frugal::Error whose message starts with
// the path: missing/unreadable file, not a protobuf, truncated, semantic errors
// (undefined values, duplicate outputs, bad initializer sizes, ...), external
// data, unsupported dtypes or attribute kinds.
//
// The result keeps everything export needs for a faithful round trip. Graph
// inputs that are also initializers become initializers only; nodes without a
// name get "<OpType>_<file index>"; nodes are sorted topologically; every node
// output gets a TensorDesc (dtype Undefined and no shape unless value_info says).
Graph load_onnx_file(const std::string& path);

// Same from bytes in memory; `origin` (a file name, or "<memory>") starts messages.
// `host_memory`: initializers may be host-memory references (tensor_pb.h), as a
// plugin offering FRUGAL_EXT_HOST_WEIGHTS receives them in `create`.
// `copied(address)`, when given, is called for each such reference as soon as
// the graph holds its copy of the bytes: the done callback of create_releasing
// (plugin.h), so that the host's copy shrinks while the graph's grows.
Graph load_onnx_bytes(const void* data, size_t size, const std::string& origin, bool host_memory = false,
                      const std::function<void(uint64_t address)>& copied = {});

}  // namespace frugal
