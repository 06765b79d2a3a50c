// What a kernel factory of either executor knows about the node it builds, and
// the small helpers every factory uses: messages that name the node, constant
// inputs, attribute arithmetic. Kernels themselves are backend-specific
// (plugins/cpu/kernels, plugins/vulkan/kernels); this is the part of
// their construction both share.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "frugal/model/graph.h"
#include "frugal/model/op.h"

namespace frugal::exec {

struct GateParams;  // gate_params.h

using Dims = std::vector<int64_t>;

// One input of the node.
struct InputInfo {
  std::string name;  // empty: optional input omitted
  bool present = false;
  bool constant = false;  // initializer or Constant node output: value != nullptr
  DType dtype = DType::Float32;
  Dims dims;  // at the declared batch (constants: their own dims)
  const TensorDesc* value = nullptr;
};

// Everything a factory needs to build the kernel of node `node`.
struct KernelSpec {
  const Node* node = nullptr;
  const Op* op = nullptr;          // the node's op (frugal/model/ops/*.h): attributes already read
  std::vector<InputInfo> inputs;   // one per node input, in node order
  int64_t opset = 13;              // default-domain opset of the model
  std::string executor = "cpu";    // "cpu" / "vulkan": named in messages
  int threads = 1;                 // cpu: threads the kernel runs with (its workspace may depend on it)
  std::string conv_path = "auto";  // cpu: the Conv kernel's path, "auto", "blas" or "onednn" (option "conv")
  bool winograd = true;  // cpu: 3x3 convs on oneDNN's Winograd kernels where it has them (option "winograd")
  Dims output;           // output dims at the declared batch (the op's shape function)
  DType output_dtype = DType::Float32;
  bool batched = true;  // every activation of the model keeps the batch on axis 0
  // Kernel gates (docs/GATING.md), on backends that run them: a gated conv's
  // gate (its output channels switched per sample, the Mul included), and for a
  // gate's Conv / Gemm consumer the size of the blocks of input values (a
  // channel's plane; 0: not a consumer) that may be all zero and skipped.
  const GateParams* gate = nullptr;
  int64_t zero_block = 0;
  std::string label() const;  // "Conv node 'conv1'", prefixes messages

  // The node's op as its class, e.g. s.op_as<ops::Conv>() (the kernel registered for that op type).
  template <class T>
  const T& op_as() const {
    return dynamic_cast<const T&>(*op);
  }
};

// frugal::Error "<Op> node '<name>': msg" (malformed model).
[[noreturn]] void fail(const KernelSpec& s, const std::string& msg);
// sdk::Failure(FRUGAL_ERR_UNSUPPORTED) "<Op> node '<name>': msg".
[[noreturn]] void unsupported(const KernelSpec& s, const std::string& msg);

// Input i, which must be present (else fail naming its role).
const InputInfo& required_input(const KernelSpec& s, size_t i, const char* role);
bool has_input(const KernelSpec& s, size_t i);
// Values of constant input i; unsupported() when it is computed at run time
// (the executors prepare weights and shapes at compile time).
std::vector<float> constant_floats(const KernelSpec& s, size_t i, const char* role);
std::vector<int64_t> constant_ints(const KernelSpec& s, size_t i, const char* role);
// Input i must be float32 (both executors run float32 only).
void require_float_activation(const KernelSpec& s, size_t i, const char* role);

int64_t product(const Dims& d, size_t from = 0, size_t to = SIZE_MAX);
std::string dims_string(const Dims& d);
// Axis in [-rank, rank) -> [0, rank); fail otherwise.
int64_t normalize_axis(const KernelSpec& s, int64_t axis, int64_t rank, const char* what = "axis");

}  // namespace frugal::exec
