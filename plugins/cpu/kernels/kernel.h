// The kernel interface of the CPU executor: one object per schedulable layer's
// head node, built once at compile time (weights copied and prepared), then run
// on any number of samples. Kernels never allocate: activations and workspace
// come from the arena through KernelArgs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/gate_params.h"
#include "common/kernel_registry.h"
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
  ThreadPool* pool = nullptr;             // the executor's threads (null: run serially)
  exec::GateStats* gate_stats = nullptr;  // gated kernels add what they did (kernels/gated.h)
  double gate_activity = -1;              // >= 0: a gated conv's kernels on at this activity (time_layer)
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  // Arena workspace bytes one call needs at these input dims (of every node
  // input: constants included, omitted inputs empty). Output dims and MACs are
  // the op's (frugal/model/ops/*.h).
  virtual uint64_t workspace_bytes(const std::vector<Dims>& in) const { return 0; }
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
  // The epilogue a residual Add after this layer joins (EpilogueSteps::kResidual;
  // the operand comes as the last of KernelArgs::in), or nullptr: kernels that
  // cannot add it where they store their output.
  virtual Epilogue* residual_epilogue() { return nullptr; }
  // True when the kernel agrees to multiply its input 0 by a per-sample,
  // per-channel scale ([n, C, 1, 1], a node input after its own and before
  // any residual) as it reads it: a squeeze-and-excite Mul before it joins it.
  virtual bool join_input_scale() { return false; }
  // Called once the layer is complete (its epilogue bundled), before any
  // workspace_bytes() or run(): kernels that build library primitives do it here.
  virtual void prepare() {}
  // Bytes of weights the kernel holds repacked for a library (0: none).
  virtual uint64_t packed_weight_bytes() const { return 0; }
};

// The kernels of this executor, one registration per op in the kernel's own
// file: FRUGAL_CPU_KERNEL(Conv, ConvKernel); where ConvKernel has a constructor
// from a KernelSpec. It throws sdk::Failure(FRUGAL_ERR_UNSUPPORTED) for features
// this executor lacks and frugal::Error for malformed nodes, both naming the node.
exec::KernelRegistry<Kernel>& kernels();
#define FRUGAL_CPU_KERNEL(OP, KERNEL)                                      \
  [[maybe_unused]] static const bool frugal_cpu_kernel_##OP##_registered = \
      ::frugal::cpu::kernels().add(#OP, &::frugal::exec::make_kernel_of<::frugal::cpu::Kernel, KERNEL>)
// One kernel for every activation the model library defines (ops::Activation).
#define FRUGAL_CPU_ACTIVATIONS(KERNEL)                                         \
  [[maybe_unused]] static const bool frugal_cpu_activation_kernel_registered = \
      ::frugal::cpu::kernels().add_activations(                                \
          &::frugal::exec::make_kernel_of<::frugal::cpu::Kernel, KERNEL>)

}  // namespace frugal::cpu
