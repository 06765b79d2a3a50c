// The kernels an executor has, one registration per op, written in the file of
// the kernel itself (as ncnn's one-line layer registration):
//
//   FRUGAL_CPU_KERNEL(Conv, ConvKernel);          // plugins/cpu/kernels/conv.cpp
//   FRUGAL_VULKAN_KERNEL(Conv, ConvKernel);       // plugins/vulkan/kernels/conv.cpp
//
// The op type is the ONNX name, the same as the op's class in the model library
// (frugal/model/ops/*.h), whose attributes the kernel reads from its spec
// (s.op_as<ops::Conv>()). A backend may also register one kernel for every
// activation (ops::Activation: Relu, Clip, HardSwish, ...), so that a new
// activation needs only its formula in the backend's epilogue. The registries
// fill at static initialisation; the engines are object libraries so that no
// registration is dropped by the linker.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/kernel_spec.h"
#include "frugal/model/ops.h"

namespace frugal::exec {

template <class KernelT>
class KernelRegistry {
 public:
  using Factory = std::unique_ptr<KernelT> (*)(const KernelSpec&);

  // Registers `f` for op `op_type`; returns true (for static initialisers).
  bool add(const char* op_type, Factory f) {
    factories_[op_type] = f;
    return true;
  }
  // Registers `f` for every op the model library defines as an activation.
  bool add_activations(Factory f) {
    activation_ = f;
    return true;
  }

  // The factory for `op_type`, or nullptr.
  Factory find(const std::string& op_type) const {
    auto it = factories_.find(op_type);
    if (it != factories_.end()) return it->second;
    const OpInfo* info = op_info(op_type);
    return info && info->activation ? activation_ : nullptr;
  }
  bool supports(const std::string& op_type) const { return find(op_type) != nullptr; }
  // Every op type with a kernel, sorted.
  std::vector<std::string> ops() const {
    std::vector<std::string> v;
    for (const OpInfo& info : all_ops())
      if (supports(info.op_type)) v.push_back(info.op_type);
    for (const auto& kv : factories_)
      if (!op_info(kv.first)) v.push_back(kv.first);  // not in the model library: the agreement test says so
    return v;
  }
  // unsupported() naming the node for an op without a kernel.
  std::unique_ptr<KernelT> make(const KernelSpec& s) const {
    const Factory f = find(s.node->op_type);
    if (!f) unsupported(s, "op " + s.node->op_type + " is not supported");
    return f(s);
  }

 private:
  std::map<std::string, Factory> factories_;
  Factory activation_ = nullptr;
};

// A factory making `KernelClass` from a spec.
template <class KernelT, class KernelClass>
std::unique_ptr<KernelT> make_kernel_of(const KernelSpec& s) {
  return std::make_unique<KernelClass>(s);
}

}  // namespace frugal::exec
