// ONNX TensorProto <-> TensorDesc: initializers, Constant values and the
// backend test data files (test_data_set_0/input_0.pb).
#pragma once

#include <cstdint>
#include <string>

#include "frugal/model/graph.h"

namespace onnx {
class TensorProto;
}

namespace frugal {

// Reads a serialized TensorProto file. data = raw little-endian bytes, dtype and
// shape as stored. Throws Error naming the path.
TensorDesc load_tensor_pb(const std::string& path);

// The external-data location of a tensor whose bytes lie in the host's memory:
// "offset" is their address, "length" their count. The host writes it only for
// a plugin that offers FRUGAL_EXT_HOST_WEIGHTS (plugin.h), so that a model's
// weights are not serialized, copied and parsed once more on their way into the
// plugin; a model read from a file or handed over otherwise never has it honoured.
inline constexpr const char* kHostMemoryLocation = "*frugal-host-memory*";

// Converts one TensorProto (typed fields such as float_data become raw bytes,
// values exact). Refuses external data (but host-memory references where
// `host_memory`), segments, unsupported dtypes and byte counts that disagree
// with the dims; messages start with `origin`.
TensorDesc tensor_from_proto(const onnx::TensorProto& t, const std::string& origin, bool host_memory = false);

// The address of a host-memory reference's bytes (its "offset"); 0 when `t` is
// none or has no valid one.
uint64_t host_memory_address(const onnx::TensorProto& t);

// The inverse: always writes raw_data. Throws Error when the shape is not fully known.
void tensor_to_proto(const TensorDesc& d, onnx::TensorProto& t);

// A host-memory reference to d's bytes instead of raw_data (kHostMemoryLocation):
// valid while d lives and is not changed. Without `with_address`: offset 0, a
// placeholder that names the tensor's place but cannot be read.
void tensor_to_proto_by_address(const TensorDesc& d, onnx::TensorProto& t, bool with_address = true);

// Element count of `dims`, throwing Error (prefixed by `what`) on negative
// dims or int64 overflow instead of wrapping.
int64_t checked_element_count(const std::vector<int64_t>& dims, const std::string& what);

}  // namespace frugal
