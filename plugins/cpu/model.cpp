#include "model.h"

#include "frugal/error.h"

namespace frugal::cpu {

Model::Model(const Graph& g, int threads) : LayerGraph("cpu"), threads_(threads) { compile(g); }

bool Model::op_supported(const std::string& op_type) const { return kernels().supports(op_type); }

bool Model::mixes_samples(int l, const std::vector<Dims>& in) const {
  return kernels_[size_t(l)]->mixes_samples(in);
}

exec::EpilogueSteps* Model::bundle_target(int l, const std::string&) {
  return kernels_[size_t(l)]->epilogue();
}

uint64_t Model::workspace_bytes(int l, int64_t n) const {
  return kernels_[size_t(l)]->workspace_bytes(call_dims(l, n));
}

}  // namespace frugal::cpu
