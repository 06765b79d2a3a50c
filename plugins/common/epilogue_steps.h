// The steps of a per-channel epilogue, as both executors build them: what a
// Conv, Gemm or BatchNormalization layer applies to its output in place
// (channels are axis 1). BatchNormalization becomes an affine step
// y = scale[c] * x + shift[c] (consecutive affine steps, and a conv bias, merge
// into one, in double); Relu, Clip and Sigmoid are steps of their own. How the
// steps run is the backend's (plugins/cpu/kernels/epilogue.h applies them on
// the host, plugins/vulkan/vk_kernel.h specialises the shaders for them).
#pragma once

#include <cstdint>
#include <vector>

#include "common/kernel_spec.h"

namespace frugal::exec {

class EpilogueSteps {
 public:
  // Values are those the shaders are specialised with (common.glsl).
  enum class Kind { Affine = 1, Relu = 2, Clip = 3, Sigmoid = 4 };
  struct Step {
    Kind kind;
    std::vector<float> scale, shift;  // Affine
    float lo = 0, hi = 0;             // Clip
  };

  // Appends y = scale[c] * x + shift[c]; merges with a directly preceding affine step.
  void add_affine(const std::vector<float>& scale, const std::vector<float>& shift);
  void add_relu() { steps_.push_back(Step{Kind::Relu, {}, {}}); }
  void add_clip(float lo, float hi);
  void add_sigmoid() { steps_.push_back(Step{Kind::Sigmoid, {}, {}}); }

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

// Appends what node s (BatchNormalization, Relu, Clip, Sigmoid; Identity and
// inference Dropout add nothing) does to `e`; unsupported() for training-mode
// nodes and run-time parameters.
void append_to_epilogue(const KernelSpec& s, EpilogueSteps& e);

}  // namespace frugal::exec
