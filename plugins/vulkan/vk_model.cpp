#include "vk_model.h"

#include <algorithm>

#include "frugal/error.h"
#include "frugal/model/shape_inference.h"
#include "frugal/plugin_sdk.hpp"

namespace frugal::vk {

Model::Model(const Graph& g) : LayerGraph("vulkan") { compile(g); }

bool Model::mixes_samples(int l, const std::vector<Dims>&) const {
  return kernels_[size_t(l)]->mixes_samples();
}

exec::EpilogueSteps* Model::bundle_target(int l, const std::string& op) {
  Epilogue* e = kernels_[size_t(l)]->epilogue();
  return e && e->has_room(op == "BatchNormalization") ? e : nullptr;
}

uint64_t Model::workspace_bytes(int l, int64_t n) const { return kernels_[size_t(l)]->workspace_bytes(n); }

}  // namespace frugal::vk
