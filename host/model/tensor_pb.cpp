#include "frugal/model/tensor_pb.h"

#include <onnx/onnx_pb.h>  // defines ONNX_API, then includes onnx-ml.pb.h

#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "frugal/error.h"
#include "model/protobuf_io.h"

namespace frugal {

static_assert(sizeof(float) == 4 && sizeof(double) == 8, "IEEE floats expected");

namespace {

[[noreturn]] void fail(const std::string& origin, const std::string& msg) {
  throw Error(origin + ": " + msg);
}

std::string onnx_dtype_name(int32_t t) {
  switch (t) {
    case onnx::TensorProto::STRING:
      return "string";
    case onnx::TensorProto::COMPLEX64:
      return "complex64";
    case onnx::TensorProto::COMPLEX128:
      return "complex128";
    case onnx::TensorProto::BFLOAT16:
      return "bfloat16";
    default:
      break;
  }
  if (t >= 1 && t <= 13) return dtype_name(static_cast<DType>(t));
  return "data type " + std::to_string(t);
}

std::string tensor_label(const onnx::TensorProto& t) {
  return t.name().empty() ? std::string("tensor (unnamed)") : "tensor '" + t.name() + "'";
}

// Copies `values` into `out` as little-endian elements of type To.
template <typename To, typename From>
void pack(const google::protobuf::RepeatedField<From>& values, std::vector<uint8_t>& out) {
  out.resize(static_cast<size_t>(values.size()) * sizeof(To));
  for (int i = 0; i < values.size(); ++i) {
    To v = static_cast<To>(values.Get(i));
    std::memcpy(out.data() + static_cast<size_t>(i) * sizeof(To), &v, sizeof(To));
  }
}

}  // namespace

int64_t checked_element_count(const std::vector<int64_t>& dims, const std::string& what) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) throw Error(what + ": negative dimension " + std::to_string(d));
    if (__builtin_mul_overflow(n, d, &n)) throw Error(what + ": element count overflows int64");
  }
  return n;
}

namespace {

std::string external_value(const onnx::TensorProto& t, const std::string& key) {
  for (const auto& kv : t.external_data())
    if (kv.key() == key) return kv.value();
  return "";
}

// A host-memory reference (kHostMemoryLocation): the bytes at the address in
// "offset", "length" of them, which must be what the dims and dtype need.
void read_host_memory(const onnx::TensorProto& t, const std::string& label, int64_t expected_bytes,
                      TensorDesc& d, const std::string& origin) {
  uint64_t address = 0, length = 0;
  try {
    address = std::stoull(external_value(t, "offset"));
    length = std::stoull(external_value(t, "length"));
  } catch (const std::exception&) {
    fail(origin, label + ": a host-memory reference without a valid offset and length");
  }
  if (address == 0) fail(origin, label + ": a host-memory reference without an address");
  if (length != static_cast<uint64_t>(expected_bytes))
    fail(origin, label + ": a host-memory reference of " + std::to_string(length) + " bytes where " +
                     std::to_string(expected_bytes) + " are needed");
  const auto* p = reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(address));
  d.data.assign(p, p + length);
}

}  // namespace

uint64_t host_memory_address(const onnx::TensorProto& t) {
  if (t.data_location() != onnx::TensorProto::EXTERNAL ||
      external_value(t, "location") != kHostMemoryLocation)
    return 0;
  try {
    return std::stoull(external_value(t, "offset"));
  } catch (const std::exception&) {
    return 0;
  }
}

TensorDesc tensor_from_proto(const onnx::TensorProto& t, const std::string& origin, bool host_memory) {
  const std::string label = tensor_label(t);
  TensorDesc d;
  d.name = t.name();
  d.doc = t.doc_string();
  d.has_shape = true;

  const bool external = t.data_location() == onnx::TensorProto::EXTERNAL;
  const std::string location = external ? external_value(t, "location") : "";
  if (external && !(host_memory && location == kHostMemoryLocation))
    fail(origin,
         "external data is not supported: tensor '" + t.name() + "' refers to file '" + location + "'");
  if (t.has_segment()) fail(origin, label + " is segmented, which is not supported");

  const int32_t dt = t.data_type();
  if (dt < 1 || dt > 13 || dt == onnx::TensorProto::STRING)
    fail(origin, label + " has unsupported dtype " + onnx_dtype_name(dt));
  d.dtype = static_cast<DType>(dt);

  std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  const int64_t count = checked_element_count(dims, origin + ": " + label);
  d.shape = make_shape(dims);
  const size_t esize = dtype_size(d.dtype);
  int64_t expected_bytes = 0;
  if (__builtin_mul_overflow(count, static_cast<int64_t>(esize), &expected_bytes))
    fail(origin, label + ": byte size overflows");

  auto mismatch = [&](size_t have, const char* field) {
    std::ostringstream os;
    os << label << " (" << dtype_name(d.dtype) << ", shape " << shape_to_string(d.shape) << ") needs "
       << expected_bytes << " bytes but " << field << " holds " << have;
    fail(origin, os.str());
  };

  if (external) {
    read_host_memory(t, label, expected_bytes, d, origin);
    return d;
  }
  if (t.has_raw_data()) {
    const std::string& raw = t.raw_data();
    if (static_cast<int64_t>(raw.size()) != expected_bytes) mismatch(raw.size(), "raw_data");
    d.data.assign(raw.begin(), raw.end());
    return d;
  }

  // Typed fields: which one holds the values depends on the dtype (onnx.proto).
  size_t n = 0;
  const char* field = "";
  switch (d.dtype) {
    case DType::Float32:
      n = static_cast<size_t>(t.float_data_size());
      field = "float_data";
      break;
    case DType::Float64:
      n = static_cast<size_t>(t.double_data_size());
      field = "double_data";
      break;
    case DType::Int64:
      n = static_cast<size_t>(t.int64_data_size());
      field = "int64_data";
      break;
    case DType::UInt32:
    case DType::UInt64:
      n = static_cast<size_t>(t.uint64_data_size());
      field = "uint64_data";
      break;
    default:
      n = static_cast<size_t>(t.int32_data_size());
      field = "int32_data";
      break;
  }
  if (static_cast<int64_t>(n) != count) mismatch(n * esize, field);
  switch (d.dtype) {
    case DType::Float32:
      pack<float>(t.float_data(), d.data);
      break;
    case DType::Float64:
      pack<double>(t.double_data(), d.data);
      break;
    case DType::Int64:
      pack<int64_t>(t.int64_data(), d.data);
      break;
    case DType::UInt32:
      pack<uint32_t>(t.uint64_data(), d.data);
      break;
    case DType::UInt64:
      pack<uint64_t>(t.uint64_data(), d.data);
      break;
    case DType::Int32:
      pack<int32_t>(t.int32_data(), d.data);
      break;
    case DType::Int16:
      pack<int16_t>(t.int32_data(), d.data);
      break;
    case DType::Int8:
      pack<int8_t>(t.int32_data(), d.data);
      break;
    case DType::UInt16:
    case DType::Float16:
      pack<uint16_t>(t.int32_data(), d.data);
      break;  // fp16 as bits
    case DType::UInt8:
    case DType::Bool:
      pack<uint8_t>(t.int32_data(), d.data);
      break;
    default:
      fail(origin, label + " has unsupported dtype " + onnx_dtype_name(dt));
  }
  return d;
}

namespace {

void describe_tensor(const TensorDesc& d, onnx::TensorProto& t) {
  if (!d.has_shape || !shape_is_known(d.shape))
    throw Error("tensor '" + d.name + "' has no fully known shape " + shape_to_string(d.shape) +
                "; cannot write it as an ONNX tensor");
  t.set_name(d.name);
  if (!d.doc.empty()) t.set_doc_string(d.doc);
  t.set_data_type(static_cast<int32_t>(d.dtype));
  for (const Dim& dim : d.shape) t.add_dims(dim.value);
}

void add_external_value(onnx::TensorProto& t, const std::string& key, const std::string& value) {
  auto* kv = t.add_external_data();
  kv->set_key(key);
  kv->set_value(value);
}

}  // namespace

void tensor_to_proto(const TensorDesc& d, onnx::TensorProto& t) {
  describe_tensor(d, t);
  t.set_raw_data(d.data.data(), d.data.size());
}

void tensor_to_proto_by_address(const TensorDesc& d, onnx::TensorProto& t, bool with_address) {
  describe_tensor(d, t);
  t.set_data_location(onnx::TensorProto::EXTERNAL);
  add_external_value(t, "location", kHostMemoryLocation);
  const uintptr_t address = with_address ? reinterpret_cast<uintptr_t>(d.data.data()) : 0;
  add_external_value(t, "offset", std::to_string(address));
  add_external_value(t, "length", std::to_string(d.data.size()));
}

TensorDesc load_tensor_pb(const std::string& path) {
  const std::string bytes = read_file_bytes(path, "tensor file");
  onnx::TensorProto t;
  parse_protobuf(t, bytes.data(), bytes.size(), path, "an ONNX TensorProto");
  return tensor_from_proto(t, path);
}

}  // namespace frugal
