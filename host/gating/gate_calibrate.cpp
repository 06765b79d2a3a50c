#include "gating/gate_calibrate.h"

#include <algorithm>
#include <set>

#include "frugal/error.h"
#include "loader/executor_client.h"
#include "loader/plugin_registry.h"
#include "tensor/tensor_random.h"

namespace frugal {

namespace {

// The model's one input at `batch` samples, uniform in [-1, 1).
Tensor random_calibration(const Graph& g, int64_t batch, uint64_t seed) {
  if (g.inputs.size() != 1) throw Error("calibration with a random input needs a model with one input");
  const TensorDesc& in = g.tensor(g.inputs[0]);
  if (!in.has_shape || in.shape.empty()) throw Error("input '" + in.name + "' has no shape");
  std::vector<int64_t> dims{batch};
  for (size_t k = 1; k < in.shape.size(); ++k) {
    if (!in.shape[k].is_known())
      throw Error("input '" + in.name + "' has a symbolic dimension " + std::to_string(k));
    dims.push_back(in.shape[k].value);
  }
  Tensor t(dims);
  fill_uniform(t, seed ^ 0x9e3779b97f4a7c15ull);
  return t;
}

// `g` cut down to the nodes that `output` depends on, with `output` its only output.
Graph probe_for(const Graph& g, const std::string& output) {
  std::set<std::string> needed{output};
  std::vector<bool> keep(g.nodes.size(), false);
  for (size_t i = g.nodes.size(); i-- > 0;) {
    const Node& n = g.nodes[i];
    for (const std::string& o : n.outputs)
      if (needed.count(o)) keep[i] = true;
    if (keep[i])
      for (const std::string& in : n.inputs) needed.insert(in);
  }
  Graph probe = g;
  probe.nodes.clear();
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (keep[i]) probe.nodes.push_back(g.nodes[i]);
  probe.outputs = {output};
  return probe;
}

// The values of `z` over the calibration batch, in model `g` as it stands (only
// the part of it that z depends on runs: the probe holds no later weights).
std::vector<float> gate_values(const Graph& g, const std::string& z, const Tensor& x,
                               const std::string& executor) {
  Graph probe = probe_for(g, z);
  if (!probe.has_tensor(z)) {
    TensorDesc d;
    d.name = z;
    probe.tensors[z] = d;
  }
  probe.remove_unused_tensors();
  const LoadedPlugin& plugin = PluginRegistry::instance().require(FRUGAL_KIND_EXECUTOR, executor);
  ExecutorClient client(plugin, probe);
  std::vector<Tensor> outputs;
  client.run(nullptr, {x}, outputs);
  return outputs.at(0).data;
}

}  // namespace

GateResult make_gated_model(const Graph& dense, const GateOptions& o,
                            const std::function<void(size_t, size_t, const std::string&)>& progress) {
  if (!(o.activity >= 0.0 && o.activity <= 1.0))
    throw Error("--activity " + std::to_string(o.activity) + " is outside [0, 1]");
  GateResult r;
  r.model = dense;
  std::vector<std::string> convs = o.layers;
  if (o.every < 1) throw Error("every must be >= 1, got " + std::to_string(o.every));
  if (convs.empty()) {
    int64_t eligible = 0;
    for (const GateSite& s : gate_sites(dense)) {
      if (!s.reason.empty())
        r.skipped.push_back(s);
      else if (eligible++ % o.every == 0)
        convs.push_back(s.conv);
      else
        r.skipped.push_back(
            {s.conv, s.channels, "left dense: only every " + std::to_string(o.every) + "th is gated"});
    }
    if (convs.empty()) throw Error("no conv of this model can be gated (see frugal info for the reasons)");
  }
  std::vector<InsertedGate> gates = insert_gates(r.model, convs, o.seed, o.threshold);
  std::sort(gates.begin(), gates.end(), [&](const InsertedGate& a, const InsertedGate& b) {
    return r.model.node_index(a.mul) < r.model.node_index(b.mul);
  });
  const Tensor x = o.calibration.data.empty() ? random_calibration(dense, o.batch, o.seed) : o.calibration;
  for (size_t i = 0; i < gates.size(); ++i) {
    if (progress) progress(i, gates.size(), gates[i].conv);
    const std::vector<float> z = gate_values(r.model, gates[i].z, x, o.executor);
    const double reached = calibrate_gate(r.model, gates[i], z, o.activity, o.threshold);
    r.gated.push_back({gates[i].conv, gates[i].channels, reached});
  }
  return r;
}

}  // namespace frugal
