// A per-channel epilogue: what a Conv, Gemm or BatchNormalization layer applies
// to its output in place, right after computing it (while it is still in cache).
// BatchNormalization becomes an affine step y = scale[c] * x + shift[c]
// (consecutive affine steps, and a conv bias, merge into one); Relu, Clip and
// Sigmoid are steps of their own. Channels are axis 1 of the output.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "thread_pool.h"

namespace frugal::cpu {

class Epilogue {
 public:
  // Appends y = scale[c] * x + shift[c]; merges with a directly preceding affine step.
  void add_affine(const std::vector<float>& scale, const std::vector<float>& shift);
  void add_relu();
  void add_clip(float lo, float hi);
  void add_sigmoid();

  bool empty() const { return steps_.empty(); }
  // Channels an affine step expects (0 when there is none).
  int64_t channels() const;

  // Applies every step to `count` contiguous values of channel `c`.
  void apply(float* x, int64_t c, int64_t count) const;
  // Applies to a [rows, channels] matrix (channels contiguous), e.g. a Gemm output.
  void apply_rows(float* x, int64_t rows, int64_t channels) const;
  // Applies to a tensor of `outer` x `channels` x `inner` values, in parallel.
  void apply_tensor(float* x, int64_t outer, int64_t channels, int64_t inner, ThreadPool* pool) const;

 private:
  enum class Kind { Affine, Relu, Clip, Sigmoid };
  struct Step {
    Kind kind;
    std::vector<float> scale, shift;  // Affine
    float lo = 0, hi = 0;             // Clip
  };
  static void apply_step(const Step& s, float* x, int64_t c, int64_t count);
  std::vector<Step> steps_;
};

}  // namespace frugal::cpu
