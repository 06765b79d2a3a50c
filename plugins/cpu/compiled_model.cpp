#include "compiled_model.h"

#include "frugal/error.h"

namespace frugal::cpu {

CompiledModel::CompiledModel(const Graph& g, int threads) : LayerGraph("cpu"), threads_(threads) {
  compile(g);
}

bool CompiledModel::op_supported(const std::string& op_type) const { return cpu::op_is_supported(op_type); }

Dims CompiledModel::add_kernel(const KernelSpec& s, const std::vector<Dims>& in) {
  std::unique_ptr<Kernel> k = make_kernel(s);
  const Dims out = k->infer(in);
  kernels_.push_back(std::move(k));
  return out;
}

std::optional<Dims> CompiledModel::probe_dims(int l, const KernelSpec&, const std::vector<Dims>& in) const {
  try {
    return kernels_[size_t(l)]->infer(in);
  } catch (const Error&) {
    return std::nullopt;
  }
}

bool CompiledModel::mixes_samples(int l, const std::vector<Dims>& in) const {
  return kernels_[size_t(l)]->mixes_samples(in);
}

exec::EpilogueSteps* CompiledModel::bundle_target(int l, const std::string&) {
  return kernels_[size_t(l)]->epilogue();
}

int64_t CompiledModel::macs_per_sample(int l) const { return kernels_[size_t(l)]->macs(call_dims(l, 1)); }

uint64_t CompiledModel::workspace_bytes(int l, int64_t n) const {
  return kernels_[size_t(l)]->workspace_bytes(call_dims(l, n));
}

}  // namespace frugal::cpu
