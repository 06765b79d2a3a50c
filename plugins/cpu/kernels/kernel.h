// The kernel interface of the CPU executor: one object per schedulable layer's
// head node, built once at compile time (weights copied and prepared), then run
// on any number of samples. Kernels never allocate: activations and workspace
// come from the arena through KernelArgs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/kernel_spec.h"
#include "frugal/model/graph.h"
#include "kernels/epilogue.h"
#include "thread_pool.h"

namespace frugal::cpu {

// The spec a factory builds from, and its helpers, are shared with the Vulkan
// executor (plugins/common/kernel_spec.h).
using exec::Dims;
using exec::InputInfo;
using exec::KernelSpec;

// One call of a kernel on n samples. Per node input: data pointer (nullptr for
// constants, which the kernel holds itself, and for omitted inputs) and dims at
// this call's batch. Output data and dims; workspace of workspace_bytes() bytes.
struct KernelArgs {
  std::vector<const float*> in;
  std::vector<Dims> in_dims;
  float* out = nullptr;
  Dims out_dims;
  float* ws = nullptr;
  ThreadPool* pool = nullptr;  // the executor's threads (null: run serially)
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  // Output dims for the given dims of every node input (constants included,
  // omitted inputs empty); throws frugal::Error naming the node when they do not fit.
  virtual Dims infer(const std::vector<Dims>& in) const = 0;
  // Arena workspace bytes one call needs at these input dims.
  virtual uint64_t workspace_bytes(const std::vector<Dims>& in) const { return 0; }
  // Multiply-accumulates of one call at these input dims.
  virtual int64_t macs(const std::vector<Dims>& in) const { return 0; }
  // True when the op combines values of different samples (dim 0), e.g. a
  // Softmax over axis 0: such a graph cannot be split by samples.
  virtual bool mixes_samples(const std::vector<Dims>& in) const { return false; }
  virtual void run(const KernelArgs& a) const = 0;
  // How the kernel computes, for describe() and benchmarks ("" = the op itself).
  virtual std::string algorithm() const { return ""; }
  // Kernels whose output has channels on axis 1 and that apply an epilogue
  // (Conv, Gemm, BatchNormalization, activations) return it so that BN and
  // activations that follow can be bundled into the same layer.
  virtual Epilogue* epilogue() { return nullptr; }
};

// Factories, one per kernel family (kernels/<family>.cpp). They throw
// sdk::Failure(FRUGAL_ERR_UNSUPPORTED) for features this executor lacks and
// frugal::Error for malformed nodes, both naming the node.
std::unique_ptr<Kernel> make_conv(const KernelSpec& s);
std::unique_ptr<Kernel> make_pool(const KernelSpec& s);       // MaxPool, AveragePool, Global*Pool
std::unique_ptr<Kernel> make_binary(const KernelSpec& s);     // Add, Sub, Mul, Div
std::unique_ptr<Kernel> make_pointwise(const KernelSpec& s);  // BN, Relu, Clip, Sigmoid, Identity, Dropout
std::unique_ptr<Kernel> make_lrn(const KernelSpec& s);
std::unique_ptr<Kernel> make_gemm(const KernelSpec& s);
std::unique_ptr<Kernel> make_matmul(const KernelSpec& s);
std::unique_ptr<Kernel> make_shape_op(const KernelSpec& s);  // Flatten, Reshape, Concat
std::unique_ptr<Kernel> make_softmax(const KernelSpec& s);

// The ops this executor runs (default ONNX domain), and the factory for each.
bool op_is_supported(const std::string& op_type);
std::vector<std::string> supported_ops();
std::unique_ptr<Kernel> make_kernel(const KernelSpec& s);

}  // namespace frugal::cpu
