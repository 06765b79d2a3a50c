#include "vk_model.h"

#include <algorithm>

#include "frugal/error.h"
#include "frugal/model/shape_inference.h"
#include "frugal/plugin_sdk.hpp"

namespace frugal::vk {

Model::Model(const Graph& g, std::optional<float> gate_threshold) : LayerGraph("vulkan") {
  gate_threshold_ = gate_threshold;
  compile(g);
}

Model::Model(Graph&& g, std::optional<float> gate_threshold) : LayerGraph("vulkan") {
  gate_threshold_ = gate_threshold;
  compile(std::move(g));
}

bool Model::mixes_samples(int l, const std::vector<Dims>&) const {
  return kernels_[size_t(l)]->mixes_samples();
}

exec::EpilogueSteps* Model::bundle_target(int l, const std::string& op) {
  Epilogue* e = kernels_[size_t(l)]->epilogue();
  return e && e->has_room(op == "BatchNormalization") ? e : nullptr;
}

// Kernels size their workspace by the samples of the call (dim 0 of input 0),
// counted here in whole 64-byte lines: the arena's allocator places a chunk
// that lands at the top of its block at a 64-byte boundary, so with a budget
// of exactly the peak a workspace a few bytes short of a line did not fit the
// hole left below the step's output and the allocator compacted, sliding the
// output down by less than a line per sample; a slide is recorded as one copy
// and one barrier per shift's length (gated alexnet at batch 1-4: 1513 copies
// before its first layer, about 7 ms per run on an NVIDIA H200; docs/GATING.md).
uint64_t Model::workspace_bytes(int l, int64_t n) const {
  const std::vector<Dims> d = call_dims(l, n);
  const uint64_t bytes = kernels_[size_t(l)]->workspace_bytes(!d.empty() && !d[0].empty() ? d[0][0] : n);
  return (bytes + 63) / 64 * 64;
}

}  // namespace frugal::vk
