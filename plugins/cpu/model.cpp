#include "model.h"

#include "frugal/error.h"
#include "kernels/gated.h"

namespace frugal::cpu {

Model::Model(const Graph& g, int threads, std::optional<float> gate_threshold, ConvOptions conv)
    : LayerGraph("cpu"), threads_(threads), conv_(std::move(conv)) {
  gate_threshold_ = gate_threshold;
  compile(g);
  for (auto& k : kernels_) k->prepare();
}

Model::Model(Graph&& g, int threads, std::optional<float> gate_threshold, ConvOptions conv)
    : LayerGraph("cpu"), threads_(threads), conv_(std::move(conv)) {
  gate_threshold_ = gate_threshold;
  compile(std::move(g));
  for (auto& k : kernels_) k->prepare();
}

uint64_t Model::packed_weight_bytes() const {
  uint64_t sum = 0;
  for (const auto& k : kernels_) sum += k->packed_weight_bytes();
  return sum;
}

// Gated convs and a gate's consumers get the gated kernels (kernels/gated.h).
void Model::add_kernel(const KernelSpec& s) {
  std::unique_ptr<Kernel> k;
  if (s.gate || s.zero_block > 0) k = s.node->op_type == "Gemm" ? make_gated_gemm(s) : make_gated_conv(s);
  kernels_.push_back(k ? std::move(k) : kernels().make(s));
}

bool Model::op_supported(const std::string& op_type) const { return kernels().supports(op_type); }

bool Model::mixes_samples(int l, const std::vector<Dims>& in) const {
  return kernels_[size_t(l)]->mixes_samples(in);
}

exec::EpilogueSteps* Model::bundle_target(int l, const std::string& op) {
  if (op == "Add") return kernels_[size_t(l)]->residual_epilogue();
  return kernels_[size_t(l)]->epilogue();
}

uint64_t Model::workspace_bytes(int l, int64_t n) const {
  return kernels_[size_t(l)]->workspace_bytes(call_dims(l, n));
}

}  // namespace frugal::cpu
