// Small ONNX models built directly with the protobuf schema (independently of
// frugal's exporter), for round-trip, fuzz and error tests.
#pragma once

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string>
#include <vector>

#include "frugal/error.h"

namespace frugal::test {

// A small CNN with random weights (fixed seed): Conv(stride 2) -> BN -> Relu
// (unnamed node) -> grouped Conv -> MaxPool -> Reshape(Constant [0,-1]) -> Gemm
// (transB) -> Softmax. Input "x" [N,3,16,16] (N symbolic), output "y" [N,10].
// Mixes raw_data and typed-field (float_data, int64_data) initializers and sets
// every metadata field the importer keeps.
onnx::ModelProto tiny_cnn_model(uint32_t seed);

// A one-node model of an unknown op in a custom domain with one attribute of
// every kind frugal keeps (float, int, string, tensor, floats, ints, strings).
onnx::ModelProto attribute_kinds_model();

// Adds a float32 initializer with raw_data.
onnx::TensorProto* add_raw_initializer(onnx::GraphProto& g, const std::string& name,
                                       std::vector<int64_t> dims, uint32_t seed);
// Declares a tensor value info (float32) with fixed dims, -1 meaning symbolic "N".
void set_value_info(onnx::ValueInfoProto& v, const std::string& name, std::vector<int64_t> dims,
                    int32_t elem_type = onnx::TensorProto::FLOAT);

// The message of the frugal::Error that `f` throws, or "(no error)". Other
// exception types propagate, so Catch reports them as failures.
template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const frugal::Error& e) {
    return e.what();
  }
  return "(no error)";
}

std::string serialize(const onnx::ModelProto& m);

// A fresh directory under the build tree for files a test writes.
std::string scratch_dir(const std::string& name);

}  // namespace frugal::test
