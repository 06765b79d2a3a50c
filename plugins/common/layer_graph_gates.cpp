// Kernel gates in the layer graph (docs/GATING.md), on backends that run them
// (LayerGraph::runs_gates): the recognised gates' nodes join their gated conv's
// layer, and the Conv / Gemm consumers get the block size they may skip.
#include "common/layer_graph.h"

namespace frugal::exec {

void LayerGraph::find_model_gates(const Graph& g) {
  GateState& s = gate_state_;
  s.analysis = find_gates(g);
  for (const GateMatch& m : s.analysis.gates) {
    s.absorbed.insert(m.gate_nodes.begin(), m.gate_nodes.end());
    s.by_mul[m.mul] = &m;
    s.params[m.conv] = std::make_unique<GateParams>(GateParams::from(g, m, gate_threshold_));
    s.consumers.insert(m.consumers.begin(), m.consumers.end());
  }
}

// A gated conv gets its gate; a consumer the size of a channel's block of input
// values: a Conv's input plane, a Gemm's H*W columns after a Flatten of
// [N, C, H, W] (1 otherwise).
void LayerGraph::attach_gate(const Node& n, KernelSpec& spec) const {
  auto p = gate_state_.params.find(n.name);
  if (p != gate_state_.params.end()) spec.gate = p->second.get();
  if (!gate_state_.consumers.count(n.name) || spec.inputs.empty()) return;
  spec.zero_block = zero_block_of(n.op_type, spec.inputs[0].name, spec.inputs[0].dims);
}

int64_t LayerGraph::zero_block_of(const std::string& op, const std::string& input, const Dims& in) const {
  if (op == "Conv") return in.size() > 2 ? product(in, 2) : 1;
  for (const Layer& L : layers_)
    if (tensors_[size_t(L.output)].name == input && L.ops[0] == "Flatten" && !L.inputs.empty()) {
      const Dims& d = tensors_[size_t(L.inputs[0])].dims;
      if (d.size() > 2) return product(d, 2);
    }
  return 1;
}

void LayerGraph::mark_gate_layers() {
  for (size_t l = 0; l < layers_.size(); ++l)
    if (gate_state_.consumers.count(layers_[l].nodes[0]) && consumer_skips_off_channels(int(l))) {
      Layer& L = layers_[l];
      L.skips_off_channels = true;
      const ActivationTensor& in = tensors_[size_t(L.node_inputs[0])];
      L.zero_block = zero_block_of(L.ops[0], in.name, in.dims);
    }
}

}  // namespace frugal::exec
