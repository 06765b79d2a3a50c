#include "vk_model.h"

#include <algorithm>

#include "frugal/error.h"
#include "frugal/model/shape_inference.h"
#include "frugal/plugin_sdk.hpp"

namespace frugal::vk {

namespace {

bool default_domain(const Node& n) { return n.domain.empty() || n.domain == "ai.onnx"; }

// Every value's known dims after shape inference of `g` from `inputs`.
std::map<std::string, Dims> inferred_dims(Graph g, const std::map<std::string, Dims>& inputs) {
  infer_shapes(g, inputs);
  std::map<std::string, Dims> d;
  for (const Node& n : g.nodes)
    for (const std::string& o : n.outputs) {
      if (o.empty() || !g.has_tensor(o)) continue;
      const TensorDesc& t = g.tensor(o);
      if (t.has_shape && shape_is_known(t.shape)) d[o] = known_dims(t.shape);
    }
  return d;
}

}  // namespace

Model::Model(const Graph& g) : LayerGraph("vulkan") { compile(g); }

bool Model::op_supported(const std::string& op_type) const { return vk::op_is_supported(op_type); }

void Model::prepare(const Graph& g, const std::map<std::string, Dims>& at_declared,
                    const std::map<std::string, Dims>& at_probe) {
  // Shape inference cannot run over ops it does not know: list them first.
  std::vector<std::string> problems;
  for (const Node& n : g.nodes) {
    if (n.op_type == "Constant" && default_domain(n)) continue;
    if (!default_domain(n) || !op_supported(n.op_type))
      problems.push_back(n.op_type + (n.domain.empty() ? "" : " (domain " + n.domain + ")") + " (node '" +
                         n.name + "')");
  }
  if (!problems.empty()) {
    std::string msg = "the vulkan executor cannot run " + std::to_string(problems.size()) + " node" +
                      (problems.size() == 1 ? "" : "s") + " of this model: ";
    for (size_t i = 0; i < problems.size(); ++i) msg += (i ? ", " : "") + problems[i];
    throw sdk::Failure(FRUGAL_ERR_UNSUPPORTED, msg);
  }
  dims0_ = inferred_dims(g, at_declared);
  probe_ok_ = batched();
  if (probe_ok_) {
    try {
      dims1_ = inferred_dims(g, at_probe);
    } catch (const Error&) {
      probe_ok_ = false;  // the layer graph says which node (its probe_dims is nullopt)
    }
  }
  shapes_batched_ = probe_ok_;
  for (const Node& n : g.nodes) {  // every activation must carry the batch on axis 0
    if (!shapes_batched_) break;
    if (n.op_type == "Constant" || n.outputs.empty() || n.outputs[0].empty()) continue;
    auto a = dims0_.find(n.outputs[0]), b = dims1_.find(n.outputs[0]);
    if (a == dims0_.end() || b == dims1_.end() || a->second.empty() || b->second.empty() ||
        a->second[0] != declared_batch() || b->second[0] != declared_batch() + 1 ||
        !std::equal(a->second.begin() + 1, a->second.end(), b->second.begin() + 1, b->second.end()))
      shapes_batched_ = false;
  }
}

void Model::complete_spec(KernelSpec& s) const {
  const std::string& out = s.node->outputs[0];
  auto it = dims0_.find(out);
  if (it == dims0_.end()) throw Error("value '" + out + "' has no known shape after inference");
  s.output = it->second;
  s.batched = shapes_batched_;
  for (InputInfo& in : s.inputs)
    if (in.present && !in.constant) in.dtype = DType::Float32;
}

Dims Model::add_kernel(const KernelSpec& s, const std::vector<Dims>&) {
  kernels_.push_back(make_kernel(s));
  return s.output;
}

std::optional<Dims> Model::probe_dims(int, const KernelSpec& s, const std::vector<Dims>&) const {
  if (!probe_ok_) return std::nullopt;
  auto it = dims1_.find(s.node->outputs[0]);
  if (it == dims1_.end()) return std::nullopt;
  return it->second;
}

bool Model::mixes_samples(int l, const std::vector<Dims>&) const {
  return kernels_[size_t(l)]->mixes_samples();
}

exec::EpilogueSteps* Model::bundle_target(int l, const std::string& op) {
  Epilogue* e = kernels_[size_t(l)]->epilogue();
  return e && e->has_room(op == "BatchNormalization") ? e : nullptr;
}

int64_t Model::macs_per_sample(int l) const { return kernels_[size_t(l)]->macs_per_sample(); }

uint64_t Model::workspace_bytes(int l, int64_t n) const { return kernels_[size_t(l)]->workspace_bytes(n); }

}  // namespace frugal::vk
