// A model compiled for the CPU executor: the layer graph both executors share
// (plugins/common/layer_graph.h: activation tensors, layers, batched detection,
// byte accounting) plus one CPU kernel per layer.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/layer_graph.h"
#include "frugal/model/graph.h"
#include "kernels/conv_1x1.h"
#include "kernels/kernel.h"

namespace frugal::cpu {

using exec::ActivationTensor;
using exec::Layer;

// How the Conv kernels choose their path (executor options "conv", "winograd",
// "residual_add" and "se_scale").
struct ConvOptions {
  std::string path = "auto";  // "auto" | "blas" | "onednn"
  bool winograd = true;       // 3x3 convs on oneDNN's Winograd kernels where it has them
  bool residual_add = true;   // a residual Add joins the packed 1x1 conv right before it
  bool se_scale = true;       // a squeeze-and-excite Mul joins the packed 1x1 conv right after it
};

class Model : public exec::LayerGraph {
 public:
  // Compiles `g` (shapes from its declared input shapes; a symbolic dim 0 is the
  // batch). Throws sdk::Failure(FRUGAL_ERR_UNSUPPORTED) listing every node this
  // executor cannot run, frugal::Error for a malformed model.
  // `threads`: what the kernels will run with (a conv's workspace depends on it).
  // `gate_threshold`: replaces every gate's threshold (docs/GATING.md).
  // `conv`: the Conv kernels' path (ExecutorOptions::conv).
  Model(const Graph& g, int threads, std::optional<float> gate_threshold = std::nullopt,
        ConvOptions conv = {});
  // The same from a graph the model may consume: each weight's bytes are freed
  // as soon as its kernel holds its copy, and the rest of `g` before the
  // kernels repack, so the weights exist about once at any moment, not twice.
  Model(Graph&& g, int threads, std::optional<float> gate_threshold = std::nullopt, ConvOptions conv = {});

  const Kernel& kernel(int l) const { return *kernels_[size_t(l)]; }
  // Bytes of weights the kernels hold repacked for oneDNN.
  uint64_t packed_weight_bytes() const;

 private:
  bool op_supported(const std::string& op_type) const override;
  void complete_spec(KernelSpec& s) const override {
    s.threads = threads_;
    s.conv_path = conv_.path;
    s.winograd = conv_.winograd;
  }
  void add_kernel(const KernelSpec& s) override;
  bool mixes_samples(int l, const std::vector<Dims>& in) const override;
  exec::EpilogueSteps* bundle_target(int l, const std::string& op) override;
  bool fuses_swish() const override { return true; }
  bool fuses_residual_add() const override { return conv_.residual_add; }
  // Where the 1x1 conv takes the packed kernel with a scale (ConvKernel::join_input_scale).
  bool fuses_input_scale(int64_t out_channels) const override {
    return conv_.se_scale && conv_.path == "auto" && Conv1x1::takes_input_scale(out_channels, packed_isa());
  }
  bool join_input_scale(int l) override { return kernels_[size_t(l)]->join_input_scale(); }
  uint64_t workspace_bytes(int l, int64_t n) const override;
  bool runs_gates() const override { return true; }

  int threads_;
  ConvOptions conv_;
  std::vector<std::unique_ptr<Kernel>> kernels_;  // per layer
};

}  // namespace frugal::cpu
