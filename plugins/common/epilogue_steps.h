// The steps of a per-channel epilogue, as both executors build them: what a
// Conv, Gemm or BatchNormalization layer applies to its output in place
// (channels are axis 1). BatchNormalization becomes an affine step
// y = scale[c] * x + shift[c] (consecutive affine steps, and a conv bias, merge
// into one, in double); each activation (ops::Activation: Relu, Clip, Sigmoid,
// HardSigmoid, HardSwish, LeakyRelu) is a step of its own with its two
// parameters. How the steps run is the backend's (plugins/cpu/kernels/epilogue.cpp
// applies them on the host, shaders/common.glsl in the shaders).
#pragma once

#include <cstdint>
#include <vector>

#include "common/kernel_spec.h"
#include "frugal/model/ops/activation.h"

namespace frugal::exec {

class EpilogueSteps {
 public:
  // Values are those the shaders are specialised with (common.glsl): the affine
  // map is 1, activations keep their ops::ActivationKind value.
  static constexpr int kAffine = 1;
  // x * sigmoid(x): a Sigmoid and the Mul of its input by it, joined on
  // backends that fuse Swish (LayerGraph::fuses_swish; not in the shaders).
  static constexpr int kSwish = 100;
  // x + the same element of the layer's residual input: a residual Add joined
  // on backends that fuse it (LayerGraph::fuses_residual_add; the layer's last
  // node input is the other operand).
  static constexpr int kResidual = 101;
  struct Step {
    int kind;                         // kAffine or an ops::ActivationKind value
    std::vector<float> scale, shift;  // affine
    float a = 0, b = 0;               // the activation's parameters (Clip: lo, hi)
    bool is(ops::ActivationKind k) const { return kind == int(k); }
  };

  // Appends y = scale[c] * x + shift[c]; merges with a directly preceding affine step.
  void add_affine(const std::vector<float>& scale, const std::vector<float>& shift);
  void add_activation(ops::ActivationKind kind, float a, float b);
  void add_swish() { steps_.push_back({kSwish, {}, {}, 0.0f, 0.0f}); }
  void add_residual() { steps_.push_back({kResidual, {}, {}, 0.0f, 0.0f}); }
  bool has_residual() const;

  bool empty() const { return steps_.empty(); }
  const std::vector<Step>& steps() const { return steps_; }
  // Channels an affine step expects (0 when there is none).
  int64_t channels() const;

 protected:
  std::vector<Step> steps_;
};

// BatchNormalization node s as y = scale[c] * x + shift[c]:
// scale = gamma / sqrt(var + eps), shift = beta - scale * mean (computed in double).
void batchnorm_affine(const KernelSpec& s, std::vector<float>& scale, std::vector<float>& shift);

// Appends what node s (BatchNormalization, an activation; Identity and
// inference Dropout add nothing) does to `e`; unsupported() for training-mode
// nodes and run-time parameters.
void append_to_epilogue(const KernelSpec& s, EpilogueSteps& e);
// True for ops that may join the epilogue of the layer producing their input.
bool joins_epilogue(const Op& op);
// True for ops that are the identity at inference (Identity, Dropout).
bool is_passthrough(const Op& op);

}  // namespace frugal::exec
