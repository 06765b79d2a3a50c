#include "frugal/model/gating.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>

#include "frugal/model/ops.h"

namespace frugal {

namespace {

// Why a Mul that looks like a gate is not one (thrown inside find_gates only).
struct Miss {
  std::string why;
};

std::string label(const Node& n) { return n.op_type + " node '" + n.name + "'"; }

bool is(const Node* n, const char* op) {
  return n && n->op_type == op && (n->domain.empty() || n->domain == "ai.onnx");
}

const Node* producer_of(const Graph& g, const std::string& value) {
  const int p = value.empty() ? -1 : g.producer(value);
  return p < 0 ? nullptr : &g.nodes[size_t(p)];
}

// The float values of a constant (initializer or Constant node), or nullopt.
std::optional<std::vector<float>> constant_floats(const Graph& g, const std::string& name) {
  if (name.empty()) return std::nullopt;
  if (g.is_initializer(name)) {
    const TensorDesc& t = g.tensor(name);
    if (t.dtype == DType::Float32 || t.dtype == DType::Float64) return t.as_float();
    return std::nullopt;
  }
  const Node* p = producer_of(g, name);
  if (!is(p, "Constant")) return std::nullopt;
  if (const Attribute* a = p->attr("value");
      a && a->t && (a->t->dtype == DType::Float32 || a->t->dtype == DType::Float64))
    return a->t->as_float();
  if (const Attribute* a = p->attr("value_float")) return std::vector<float>{a->f};
  return std::nullopt;
}

std::vector<int64_t> weight_dims(const Graph& g, const Node& conv) {
  if (conv.inputs.size() < 2 || !g.is_initializer(conv.inputs[1])) return {};
  const TensorDesc& w = g.tensor(conv.inputs[1]);
  return w.has_shape && shape_is_known(w.shape) ? known_dims(w.shape) : std::vector<int64_t>{};
}

// `value` must be read by exactly one node and not be a graph output: else the
// ungated value escapes the gate.
void require_sole_reader(const Graph& g, const std::string& value, const Node& reader) {
  const std::vector<int> readers = g.consumers(value);
  const bool output = std::find(g.outputs.begin(), g.outputs.end(), value) != g.outputs.end();
  if (readers.size() != 1 || output) {
    std::string other = output ? "the graph's outputs" : "";
    for (int r : readers)
      if (g.nodes[size_t(r)].name != reader.name) other = label(g.nodes[size_t(r)]);
    throw Miss{"'" + value + "' (read by " + label(reader) + ") is also read by " + other};
  }
}

bool all_zero(const std::vector<int64_t>& v) {
  return std::all_of(v.begin(), v.end(), [](int64_t x) { return x == 0; });
}

// A 1x1 conv of stride 1, group 1, no padding and constant weights [K, C, 1, 1].
bool is_pointwise_conv(const Graph& g, const Node* n) {
  if (!is(n, "Conv")) return false;
  const std::vector<int64_t> w = weight_dims(g, *n);
  if (w.size() != 4 || w[2] != 1 || w[3] != 1) return false;
  if (n->attr_int("group", 1) != 1) return false;
  for (int64_t s : n->attr_ints("strides", {}))
    if (s != 1) return false;
  if (!all_zero(n->attr_ints("pads", {}))) return false;
  const std::string pad = n->attr_string("auto_pad", "NOTSET");
  if (pad != "NOTSET" && pad != "VALID") return false;
  return n->inputs.size() < 3 || n->inputs[2].empty() || g.is_initializer(n->inputs[2]);
}

// The gate's pooled 1x1 conv feeding Sigmoid input `p`: GlobalAveragePool(Conv1x1(x)) or
// Conv1x1(GlobalAveragePool(x)). Fills the match's gate nodes, input, channels.
bool match_pooled_conv(const Graph& g, const std::string& p, GateMatch& m) {
  const Node* a = producer_of(g, p);
  if (!a) return false;
  const Node* b = producer_of(g, a->inputs.empty() ? "" : a->inputs[0]);
  const Node *pool = nullptr, *conv = nullptr;
  if (is(a, "GlobalAveragePool") && is_pointwise_conv(g, b)) {
    pool = a;
    conv = b;
  } else if (is_pointwise_conv(g, a) && is(b, "GlobalAveragePool")) {
    conv = a;
    pool = b;
    m.pool_first = true;
  } else {
    return false;
  }
  const Node& first = m.pool_first ? *pool : *conv;
  m.input = first.inputs[0];
  m.gate_conv = conv->name;
  const std::vector<int64_t> w = weight_dims(g, *conv);
  m.channels = w[0];
  m.input_channels = w[1];
  m.gate_nodes = {first.name, (m.pool_first ? conv : pool)->name};
  return true;
}

// Whether `mask` (multiplying `data`) looks like a gate: a Cast, a comparison, or a
// Sigmoid of a pooled 1x1 conv, but not SiLU (data * Sigmoid(data)).
bool looks_like_gate(const Graph& g, const std::string& mask, const std::string& data) {
  const Node* n = producer_of(g, mask);
  if (is(n, "Cast") || is(n, "GreaterOrEqual") || is(n, "Greater")) return true;
  GateMatch scratch;
  return is(n, "Sigmoid") && n->inputs[0] != data && match_pooled_conv(g, n->inputs[0], scratch);
}

// The switch side: Cast(to float) of GreaterOrEqual / Greater (Sigmoid(pooled 1x1 conv), t).
void match_switch(const Graph& g, const Node& mul, const std::string& mask, GateMatch& m) {
  const Node* n = producer_of(g, mask);
  if (is(n, "Sigmoid")) throw Miss{"a soft gate (Sigmoid without a threshold, the training-time form)"};
  if (!is(n, "Cast"))
    throw Miss{"the switch " + (n ? label(*n) : "'" + mask + "'") + " is not Cast to float of a comparison"};
  const Node& cast = *n;
  if (cast.attr_int("to", 0) != int64_t(DType::Float32))
    throw Miss{label(cast) + " casts to type " + std::to_string(cast.attr_int("to", 0)) + ", not float (1)"};
  require_sole_reader(g, mask, mul);
  const Node* cmp = producer_of(g, cast.inputs[0]);
  if (!is(cmp, "GreaterOrEqual") && !is(cmp, "Greater"))
    throw Miss{label(cast) + " does not cast a GreaterOrEqual or Greater"};
  require_sole_reader(g, cast.inputs[0], cast);
  m.strict = is(cmp, "Greater");
  const std::optional<std::vector<float>> t =
      constant_floats(g, cmp->inputs.size() > 1 ? cmp->inputs[1] : "");
  if (!t || t->size() != 1) throw Miss{label(*cmp) + ": the threshold (input 2) is not a constant scalar"};
  m.threshold = (*t)[0];
  if (!(m.threshold >= 0.0f && m.threshold <= 1.0f))
    throw Miss{label(*cmp) + ": threshold " + std::to_string(m.threshold) + " is outside [0, 1]"};
  const Node* sig = producer_of(g, cmp->inputs[0]);
  if (!is(sig, "Sigmoid")) throw Miss{label(*cmp) + " does not compare a Sigmoid"};
  require_sole_reader(g, cmp->inputs[0], *cmp);
  if (!match_pooled_conv(g, sig->inputs[0], m))
    throw Miss{label(*sig) +
               " does not read GlobalAveragePool of a 1x1 conv (stride 1, group 1, no padding, "
               "constant weights), nor the reverse"};
  const Node& second = g.nodes[size_t(g.node_index(m.gate_nodes[1]))];
  require_sole_reader(g, sig->inputs[0], *sig);
  require_sole_reader(g, second.inputs[0], second);
  m.gate_nodes.insert(m.gate_nodes.end(), {sig->name, cmp->name, cast.name});
}

// The data side: a Conv reading the gate's input, then only BN / activations up to the Mul.
void match_conv(const Graph& g, const Node& mul, const std::string& data, GateMatch& m) {
  std::vector<std::string> between;
  const Node* reader = &mul;
  std::string value = data;
  const Node* n = producer_of(g, value);
  while (n && !is(n, "Conv") && runs_after_conv(*n)) {
    require_sole_reader(g, value, *reader);
    between.insert(between.begin(), n->name);
    reader = n;
    value = n->inputs[0];
    n = producer_of(g, value);
  }
  if (!is(n, "Conv"))
    throw Miss{"the switched value '" + data +
               "' does not come from a Conv (through BatchNormalization and "
               "activations only)"};
  require_sole_reader(g, value, *reader);
  if (n->inputs[0] != m.input)
    throw Miss{"the gate reads '" + m.input + "' but the gated " + label(*n) + " reads '" + n->inputs[0] +
               "'"};
  if (n->attr_int("group", 1) != 1) throw Miss{label(*n) + " is grouped (gated convs are group 1 only)"};
  const std::vector<int64_t> w = weight_dims(g, *n);
  if (w.empty()) throw Miss{label(*n) + " has no constant weights"};
  if (w[0] != m.channels)
    throw Miss{"the gate has " + std::to_string(m.channels) + " channels but " + label(*n) + " has " +
               std::to_string(w[0])};
  m.conv = n->name;
  m.between = between;
}

// Follows the Mul's output through ops that keep zeros to its Conv / Gemm consumers.
void match_consumers(const Graph& g, const Node& mul, GateMatch& m) {
  std::vector<std::string> todo{mul.outputs[0]};
  std::set<std::string> seen;
  while (!todo.empty()) {
    const std::string v = todo.back();
    todo.pop_back();
    if (!seen.insert(v).second) continue;
    for (int r : g.consumers(v)) {
      const Node& n = g.nodes[size_t(r)];
      if (is(&n, "Conv") || is(&n, "Gemm")) {
        if (std::find(m.consumers.begin(), m.consumers.end(), n.name) == m.consumers.end())
          m.consumers.push_back(n.name);
      } else if (keeps_zeros(g, n)) {
        for (const std::string& o : n.outputs)
          if (!o.empty()) todo.push_back(o);
      } else {
        throw Miss{"its output reaches " + label(n) + ", which does not keep 0 at 0 (see docs/GATING.md)"};
      }
    }
  }
}

}  // namespace

bool runs_after_conv(const Node& n) {
  if (!n.domain.empty() && n.domain != "ai.onnx") return false;
  const OpInfo* info = op_info(n.op_type);
  return (info && info->activation) || n.op_type == "BatchNormalization" || n.op_type == "Dropout" ||
         n.op_type == "Identity";
}

bool keeps_zeros(const Graph& g, const Node& n) {
  if (!n.domain.empty() && n.domain != "ai.onnx") return false;
  static const std::set<std::string> kAlways = {"Relu",      "LeakyRelu",        "MaxPool", "Dropout",
                                                "Identity",  "Concat",           "Flatten", "GlobalMaxPool",
                                                "HardSwish", "GlobalAveragePool"};
  if (kAlways.count(n.op_type)) return true;
  if (n.op_type != "Clip") return false;
  float lo = n.attr_float("min", -std::numeric_limits<float>::infinity());
  float hi = n.attr_float("max", std::numeric_limits<float>::infinity());
  if (n.inputs.size() > 1 && !n.inputs[1].empty()) {
    const auto v = constant_floats(g, n.inputs[1]);
    if (!v || v->size() != 1) return false;
    lo = (*v)[0];
  }
  if (n.inputs.size() > 2 && !n.inputs[2].empty()) {
    const auto v = constant_floats(g, n.inputs[2]);
    if (!v || v->size() != 1) return false;
    hi = (*v)[0];
  }
  return lo <= 0.0f && hi >= 0.0f;
}

const GateMatch* GateAnalysis::by_conv(const std::string& conv_node) const {
  for (const GateMatch& m : gates)
    if (m.conv == conv_node) return &m;
  return nullptr;
}

const GateMatch* GateAnalysis::by_mul(const std::string& mul_node) const {
  for (const GateMatch& m : gates)
    if (m.mul == mul_node) return &m;
  return nullptr;
}

GateAnalysis find_gates(const Graph& g) {
  GateAnalysis out;
  std::set<std::string> gated_convs;
  for (const Node& mul : g.nodes) {
    if (!is(&mul, "Mul") || mul.inputs.size() != 2 || mul.outputs.empty()) continue;
    int side = -1;
    for (int k : {1, 0})
      if (side < 0 && looks_like_gate(g, mul.inputs[size_t(k)], mul.inputs[size_t(1 - k)])) side = k;
    if (side < 0) continue;
    GateMatch m;
    m.mul = mul.name;
    try {
      match_switch(g, mul, mul.inputs[size_t(side)], m);
      match_conv(g, mul, mul.inputs[size_t(1 - side)], m);
      if (!gated_convs.insert(m.conv).second) throw Miss{"Conv node '" + m.conv + "' is gated twice"};
      match_consumers(g, mul, m);
      out.gates.push_back(std::move(m));
    } catch (const Miss& miss) {
      out.near_misses.push_back({mul.name, miss.why});
    }
  }
  // The next gate's own 1x1 conv reads the zeros too, but it is part of that gate, not a consumer.
  std::set<std::string> gate_convs;
  for (const GateMatch& m : out.gates) gate_convs.insert(m.gate_conv);
  for (GateMatch& m : out.gates)
    m.consumers.erase(std::remove_if(m.consumers.begin(), m.consumers.end(),
                                     [&](const std::string& c) { return gate_convs.count(c) != 0; }),
                      m.consumers.end());
  return out;
}

}  // namespace frugal
