// A per-channel epilogue: what a Conv, Gemm or BatchNormalization layer applies
// to its output in place, right after computing it (while it is still in cache).
// The steps (plugins/common/epilogue_steps.h) are built as on the Vulkan
// executor; this class applies them on the host. Channels are axis 1 of the output.
#pragma once

#include <cstdint>

#include "common/epilogue_steps.h"
#include "thread_pool.h"

namespace frugal::cpu {

class Epilogue : public exec::EpilogueSteps {
 public:
  // Applies every step to `count` contiguous values of channel `c`.
  void apply(float* x, int64_t c, int64_t count) const;
  // Applies to a [rows, channels] matrix (channels contiguous), e.g. a Gemm output.
  void apply_rows(float* x, int64_t rows, int64_t channels) const;
  // Applies to a tensor of `outer` x `channels` x `inner` values, in parallel.
  void apply_tensor(float* x, int64_t outer, int64_t channels, int64_t inner, ThreadPool* pool) const;

 private:
  static void apply_step(const Step& s, float* x, int64_t c, int64_t count);
};

using exec::append_to_epilogue;

}  // namespace frugal::cpu
