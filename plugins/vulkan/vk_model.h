// A model compiled for the Vulkan executor: the layer graph both executors
// share (plugins/common/layer_graph.h: activation tensors, layers, batched
// detection, the in/out/ws byte accounting, so cost tables and plans mean the
// same on both) plus one Vulkan kernel per layer.
#pragma once

#include <map>
#include <memory>
#include <optional>
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
  // `gate_threshold`: replaces every gate's threshold (docs/GATING.md).
  explicit Model(const Graph& g, std::optional<float> gate_threshold = std::nullopt);
  // The same from a graph the model consumes: each weight's bytes are freed as
  // soon as the last kernel reading it holds its copy (LayerGraph::compile).
  explicit Model(Graph&& g, std::optional<float> gate_threshold = std::nullopt);

  Kernel& kernel(int l) const { return *kernels_[size_t(l)]; }

 private:
  bool op_supported(const std::string& op_type) const override { return kernels().supports(op_type); }
  void add_kernel(const KernelSpec& s) override { kernels_.push_back(kernels().make(s)); }
  bool mixes_samples(int l, const std::vector<Dims>& in) const override;
  exec::EpilogueSteps* bundle_target(int l, const std::string& op) override;
  uint64_t workspace_bytes(int l, int64_t n) const override;
  // Gated convs compute their gates on the device (kernels/conv.cpp); their
  // Conv consumers skip the input channels that are all zero, a Gemm consumer
  // runs densely on the zeros.
  bool runs_gates() const override { return true; }
  bool consumer_skips_off_channels(int l) const override { return kernels_[size_t(l)]->skips_off_channels(); }

  std::vector<std::unique_ptr<Kernel>> kernels_;  // per layer
};

}  // namespace frugal::vk
