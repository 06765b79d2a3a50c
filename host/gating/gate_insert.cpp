#include "gating/gate_insert.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "frugal/error.h"
#include "frugal/model/gating.h"
#include "frugal/model/ops.h"

namespace frugal {

namespace {

const Node& node_named(const Graph& g, const std::string& name) {
  const int i = g.node_index(name);
  if (i < 0) throw Error("no node named '" + name + "'");
  return g.nodes[size_t(i)];
}

std::vector<int64_t> conv_weight_dims(const Graph& g, const Node& conv) {
  if (conv.inputs.size() < 2 || !g.is_initializer(conv.inputs[1]))
    throw Error("Conv node '" + conv.name + "' has no constant weights");
  const TensorDesc& w = g.tensor(conv.inputs[1]);
  if (!w.has_shape || w.shape.size() != 4 || !shape_is_known(w.shape))
    throw Error("Conv node '" + conv.name + "': gates need 2-D convs with known weight shapes");
  return known_dims(w.shape);
}

// The value the gate multiplies: the conv's output after the BN / activations
// that only it feeds.
std::string gated_value(const Graph& g, const Node& conv) {
  std::string v = conv.outputs[0];
  for (;;) {
    const std::vector<int> readers = g.consumers(v);
    if (readers.size() != 1 || std::find(g.outputs.begin(), g.outputs.end(), v) != g.outputs.end()) return v;
    const Node& n = g.nodes[size_t(readers[0])];
    if (!runs_after_conv(n) || n.inputs.empty() || n.inputs[0] != v) return v;
    v = n.outputs[0];
  }
}

Node make_node(const std::string& op, const std::string& name, std::vector<std::string> in, std::string out) {
  Node n;
  n.op_type = op;
  n.name = name;
  n.inputs = std::move(in);
  n.outputs = {std::move(out)};
  return n;
}

InsertedGate insert_one(Graph& g, const std::string& conv_name, std::mt19937_64& rng, float threshold) {
  const Node conv = node_named(g, conv_name);
  const std::vector<int64_t> w = conv_weight_dims(g, conv);
  const int64_t K = w[0], C = w[1] * conv.attr_int("group", 1);
  const std::string x = conv.inputs[0], v = gated_value(g, conv);
  const std::string base = conv_name + "_gate";
  auto fresh = [&](const std::string& suffix) { return g.unique_name(base + suffix); };
  // The value's producer now writes v_pre; the Mul writes v, so readers and graph outputs stay.
  const std::string pre = fresh("_in");
  const int producer = g.producer(v);
  for (std::string& o : g.nodes[size_t(producer)].outputs)
    if (o == v) o = pre;
  InsertedGate gate;
  gate.conv = conv_name;
  gate.channels = K;
  std::vector<float> weights(size_t(K * C));
  const float a = std::sqrt(3.0f / float(C));
  std::uniform_real_distribution<float> uniform(-a, a);
  for (float& f : weights) f = uniform(rng);
  const std::vector<float> bias(size_t(K), 0.0f);
  const std::string wname = fresh("_w");
  g.add_initializer(wname, DType::Float32, {K, C, 1, 1}, weights.data());
  gate.bias = fresh("_b");
  g.add_initializer(gate.bias, DType::Float32, {K}, bias.data());
  const std::string tname = fresh("_threshold");
  g.add_initializer(tname, DType::Float32, {}, &threshold);
  const std::string pooled = fresh("_pooled");
  gate.z = fresh("_z");
  const std::string sw = fresh("_sw"), on = fresh("_on"), mask = fresh("_mask");
  gate.mul = fresh("_mul");
  std::vector<Node> nodes;
  nodes.push_back(make_node("GlobalAveragePool", fresh("_pool"), {x}, pooled));
  nodes.push_back(make_node("Conv", fresh("_conv"), {pooled, wname, gate.bias}, gate.z));
  nodes.push_back(make_node("Sigmoid", fresh("_sigmoid"), {gate.z}, sw));
  nodes.push_back(make_node("GreaterOrEqual", fresh("_ge"), {sw, tname}, on));
  nodes.push_back(make_node("Cast", fresh("_cast"), {on}, mask));
  nodes.back().set_attr_int("to", int64_t(DType::Float32));
  nodes.push_back(make_node("Mul", gate.mul, {pre, mask}, v));
  g.nodes.insert(g.nodes.begin() + producer + 1, nodes.begin(), nodes.end());
  return gate;
}

void require_opset_12(Graph& g) {
  if (default_opset(g) < 12)
    throw Error("gates use GreaterOrEqual, which needs opset 12 or later; this model declares opset " +
                std::to_string(default_opset(g)));
}

}  // namespace

std::vector<GateSite> gate_sites(const Graph& g) {
  std::vector<GateSite> sites;
  for (const Node& n : g.nodes) {
    if (n.op_type != "Conv" || !(n.domain.empty() || n.domain == "ai.onnx")) continue;
    GateSite s;
    s.conv = n.name;
    try {
      Graph trial = g;
      std::mt19937_64 rng(1);
      require_opset_12(trial);
      s.channels = conv_weight_dims(trial, n)[0];
      const InsertedGate gate = insert_one(trial, n.name, rng, 0.5f);
      const GateAnalysis a = find_gates(trial);
      if (const GateMatch* m = a.by_conv(n.name); m && m->consumers.empty())
        s.reason = "no Conv or Gemm reads its output: a gate there would only zero the network's outputs";
      if (!a.by_conv(n.name))
        for (const GateNearMiss& m : a.near_misses)
          if (m.mul == gate.mul) s.reason = m.reason;
    } catch (const Error& e) {
      s.reason = e.what();
    }
    sites.push_back(s);
  }
  return sites;
}

std::vector<InsertedGate> insert_gates(Graph& g, const std::vector<std::string>& convs, uint64_t seed,
                                       float threshold) {
  if (!(threshold >= 0.0f && threshold <= 1.0f))
    throw Error("gate threshold " + std::to_string(threshold) + " is outside [0, 1]");
  require_opset_12(g);
  const std::vector<GateSite> sites = gate_sites(g);
  for (const std::string& c : convs) {
    auto it = std::find_if(sites.begin(), sites.end(), [&](const GateSite& s) { return s.conv == c; });
    if (it == sites.end()) throw Error("no Conv node named '" + c + "' to gate");
    if (!it->reason.empty()) throw Error("Conv node '" + c + "' cannot be gated: " + it->reason);
  }
  std::mt19937_64 rng(seed);
  std::vector<InsertedGate> out;
  for (const std::string& c : convs) out.push_back(insert_one(g, c, rng, threshold));
  g.topological_sort();
  return out;
}

double calibrate_gate(Graph& g, const InsertedGate& gate, const std::vector<float>& z, double activity,
                      float threshold) {
  if (!(threshold > 0.0f && threshold < 1.0f))
    throw Error("calibration needs a threshold inside (0, 1), not " + std::to_string(threshold));
  if (!(activity >= 0.0 && activity <= 1.0))
    throw Error("activity " + std::to_string(activity) + " is outside [0, 1]");
  if (z.empty()) throw Error("gate of '" + gate.conv + "': no calibration values");
  std::vector<float> sorted = z;
  std::sort(sorted.begin(), sorted.end(), std::greater<float>());
  const size_t n = sorted.size(), on = size_t(std::lround(activity * double(n)));
  // The cut: values above it are on. Half the gap to the neighbours (at least 1
  // at the ends, where there is no neighbour) keeps every value clear of it.
  double cut;
  if (on == 0)
    cut = double(sorted[0]) + 1.0;
  else if (on == n)
    cut = double(sorted[n - 1]) - 1.0;
  else
    cut = 0.5 * (double(sorted[on - 1]) + double(sorted[on]));
  const double logit = std::log(double(threshold) / (1.0 - double(threshold)));
  const float shift = float(logit - cut);
  float* b = g.tensor(gate.bias).f32();
  for (int64_t k = 0; k < gate.channels; ++k) b[k] += shift;
  size_t reached = 0;
  for (float v : z) reached += double(v) + double(shift) >= logit;
  return double(reached) / double(n);
}

}  // namespace frugal
