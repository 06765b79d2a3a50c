// ONNX TensorProto <-> TensorDesc: initializers, Constant values and the
// backend test data files (test_data_set_0/input_0.pb).
#pragma once

#include <string>

#include "frugal/model/graph.h"

namespace onnx {
class TensorProto;
}

namespace frugal {

// Reads a serialized TensorProto file. data = raw little-endian bytes, dtype and
// shape as stored. Throws Error naming the path.
TensorDesc load_tensor_pb(const std::string& path);

// Converts one TensorProto (typed fields such as float_data become raw bytes,
// values exact). Refuses external data, segments, unsupported dtypes and byte
// counts that disagree with the dims; messages start with `origin`.
TensorDesc tensor_from_proto(const onnx::TensorProto& t, const std::string& origin);

// The inverse: always writes raw_data. Throws Error when the shape is not fully known.
void tensor_to_proto(const TensorDesc& d, onnx::TensorProto& t);

// Element count of `dims`, throwing Error (prefixed by `what`) on negative
// dims or int64 overflow instead of wrapping.
int64_t checked_element_count(const std::vector<int64_t>& dims, const std::string& what);

}  // namespace frugal
