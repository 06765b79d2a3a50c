// A model compiled for the Vulkan executor: the layer graph both executors
// share (plugins/common/layer_graph.h: activation tensors, layers, batched
// detection, the in/out/ws byte accounting, so cost tables and plans mean the
// same on both) plus one Vulkan kernel per layer. Output shapes come from the
// host's shape inference over the whole graph (the kernels are built from them).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/layer_graph.h"
#include "frugal/model/graph.h"
#include "vk_kernel.h"

namespace frugal::vk {

using exec::ActivationTensor;
using exec::Layer;

class Model : public exec::LayerGraph {
 public:
  // Compiles `g`. Throws sdk::Failure(FRUGAL_ERR_UNSUPPORTED) listing every node
  // this executor cannot run, frugal::Error for a malformed model.
  explicit Model(const Graph& g);

  Kernel& kernel(int l) const { return *kernels_[size_t(l)]; }

 private:
  bool op_supported(const std::string& op_type) const override;
  void prepare(const Graph& g, const std::map<std::string, Dims>& at_declared,
               const std::map<std::string, Dims>& at_probe) override;
  void complete_spec(KernelSpec& s) const override;
  Dims add_kernel(const KernelSpec& s, const std::vector<Dims>& in) override;
  std::optional<Dims> probe_dims(int l, const KernelSpec& s, const std::vector<Dims>& in) const override;
  bool mixes_samples(int l, const std::vector<Dims>& in) const override;
  exec::EpilogueSteps* bundle_target(int l, const std::string& op) override;
  int64_t macs_per_sample(int l) const override;
  uint64_t workspace_bytes(int l, int64_t n) const override;

  std::map<std::string, Dims> dims0_, dims1_;  // every value's dims at the declared batch and at declared + 1
  bool probe_ok_ = false;                      // shape inference at declared + 1 succeeded
  bool shapes_batched_ = false;                // and every activation carries the batch on axis 0
  std::vector<std::unique_ptr<Kernel>> kernels_;  // per layer
};

}  // namespace frugal::vk
