#include "fold_check.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>

#include "frugal/error.h"

namespace frugal::fold_test {

RefValues random_inputs(const Graph& g, int64_t batch, uint64_t seed) {
  RefValues in;
  for (const std::string& name : g.inputs) {
    const TensorDesc& t = g.tensor(name);
    std::vector<int64_t> dims;
    for (size_t i = 0; i < t.shape.size(); ++i) dims.push_back(i == 0 ? batch : t.shape[i].value);
    in[name] = random_ref_tensor(dims, seed++);
  }
  return in;
}

double relative_mismatch(const Graph& original, const Graph& folded, int64_t batch, uint64_t seed) {
  const RefValues in = random_inputs(original, batch, seed);
  const RefValues a = reference_run(original, in);
  const RefValues b = reference_run(folded, in);
  double worst = 0.0;
  for (const auto& kv : a) {
    auto it = b.find(kv.first);
    if (it == b.end()) throw Error("folded graph lost output '" + kv.first + "'");
    double scale = 0.0;
    for (double v : kv.second.data) scale = std::max(scale, std::fabs(v));
    worst = std::max(worst, max_abs_diff(it->second, kv.second) / std::max(scale, 1e-30));
  }
  return worst;
}

int count_op(const Graph& g, const std::string& op_type) {
  return static_cast<int>(
      std::count_if(g.nodes.begin(), g.nodes.end(), [&](const Node& n) { return n.op_type == op_type; }));
}

bool same_graph(const Graph& a, const Graph& b) {
  if (a.nodes.size() != b.nodes.size() || a.inputs != b.inputs || a.outputs != b.outputs) return false;
  for (size_t i = 0; i < a.nodes.size(); ++i) {
    const Node &x = a.nodes[i], &y = b.nodes[i];
    if (x.op_type != y.op_type || x.inputs != y.inputs || x.outputs != y.outputs ||
        x.attributes.size() != y.attributes.size())
      return false;
  }
  for (const auto& kv : a.tensors) {
    if (!kv.second.is_initializer) continue;
    auto it = b.tensors.find(kv.first);
    if (it == b.tensors.end() || !it->second.is_initializer || it->second.data != kv.second.data)
      return false;
  }
  return std::count_if(a.tensors.begin(), a.tensors.end(), [](const auto& kv) {
           return kv.second.is_initializer;
         }) == std::count_if(b.tensors.begin(), b.tensors.end(), [](const auto& kv) {
           return kv.second.is_initializer;
         });
}

uint64_t graph_digest(const Graph& g) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  };
  auto mix_str = [&](const std::string& s) { mix(s.data(), s.size() + 1); };
  for (const Node& n : g.nodes) {
    mix_str(n.op_type);
    for (const std::string& s : n.inputs) mix_str(s);
    for (const std::string& s : n.outputs) mix_str(s);
  }
  for (const auto& kv : g.tensors)
    if (kv.second.is_initializer) {
      mix_str(kv.first);
      mix(kv.second.data.data(), kv.second.data.size());
    }
  return h;
}

Graph truncate_at(const Graph& g, const std::string& value) {
  // Built piece by piece: copying the whole graph first would copy every weight.
  Graph t;
  t.name = g.name;
  t.ir_version = g.ir_version;
  t.opsets = g.opsets;
  t.inputs = g.inputs;
  t.outputs = {value};
  std::set<std::string> needed{value};
  std::vector<const Node*> kept;
  for (auto it = g.nodes.rbegin(); it != g.nodes.rend(); ++it) {
    const bool used = std::any_of(it->outputs.begin(), it->outputs.end(),
                                  [&](const std::string& o) { return needed.count(o) > 0; });
    if (!used) continue;
    needed.insert(it->inputs.begin(), it->inputs.end());
    kept.push_back(&*it);
  }
  for (auto it = kept.rbegin(); it != kept.rend(); ++it) t.nodes.push_back(**it);
  needed.insert(g.inputs.begin(), g.inputs.end());
  for (const std::string& n : needed)
    if (g.has_tensor(n)) t.tensors[n] = g.tensor(n);
  for (const std::string& n : g.initializer_order)
    if (t.tensors.count(n)) t.initializer_order.push_back(n);
  return t;
}

namespace {

enum class Kind { Expressive, Other, NonAffine };

// The paper's three categories (BN itself is affine, so it counts as "other").
Kind kind_of(const Node& n) {
  static const std::set<std::string> expressive{"Conv", "Gemm", "MatMul"};
  static const std::set<std::string> other{"Add",
                                           "Concat",
                                           "MaxPool",
                                           "AveragePool",
                                           "Flatten",
                                           "Reshape",
                                           "GlobalAveragePool",
                                           "Identity",
                                           "Dropout",
                                           "BatchNormalization",
                                           "Pad",
                                           "Resize",
                                           "Upsample",
                                           "GlobalMaxPool"};
  if (expressive.count(n.op_type)) return Kind::Expressive;
  if (other.count(n.op_type)) return Kind::Other;
  return Kind::NonAffine;
}

struct Side {
  std::set<int> nodes;
  bool meets_non_expressive = false;
};

// Grows one side of the component from `start` (a neighbour of the BN).
Side grow(const Graph& g, int bn, int start) {
  Side s;
  std::set<std::string> outputs(g.outputs.begin(), g.outputs.end()), inputs(g.inputs.begin(), g.inputs.end());
  std::vector<int> stack;
  if (kind_of(g.nodes[start]) == Kind::NonAffine) {
    s.meets_non_expressive = true;  // the side is just {N} and meets a non-affine node
    return s;
  }
  stack.push_back(start);
  s.nodes.insert(start);
  while (!stack.empty()) {
    const int n = stack.back();
    stack.pop_back();
    const Node& node = g.nodes[n];
    if (kind_of(node) == Kind::Expressive) continue;  // a leaf
    std::vector<int> neighbours;
    for (const std::string& in : node.inputs) {
      if (in.empty() || g.is_initializer(in)) continue;
      if (inputs.count(in)) s.meets_non_expressive = true;
      const int p = g.producer(in);
      if (p >= 0) neighbours.push_back(p);
    }
    for (const std::string& out : node.outputs) {
      if (outputs.count(out)) s.meets_non_expressive = true;
      for (int c : g.consumers(out)) neighbours.push_back(c);
    }
    for (int m : neighbours) {
      if (m == bn || s.nodes.count(m)) continue;
      if (kind_of(g.nodes[m]) == Kind::NonAffine) {
        s.meets_non_expressive = true;
        continue;
      }
      s.nodes.insert(m);
      stack.push_back(m);
    }
  }
  return s;
}

}  // namespace

bool theorem_foldable(const Graph& g, int bn) {
  const Node& n = g.nodes[bn];
  // Input side.
  const int p = g.producer(n.inputs[0]);
  bool in_ok = false;
  if (p >= 0) {
    Side s = grow(g, bn, p);
    in_ok = !s.nodes.empty() && !s.meets_non_expressive;
  }
  // Output side: every reader of the BN output starts it.
  bool out_ok = std::find(g.outputs.begin(), g.outputs.end(), n.outputs[0]) == g.outputs.end();
  bool any = false;
  for (int c : g.consumers(n.outputs[0])) {
    Side s = grow(g, bn, c);
    any = any || !s.nodes.empty();
    out_ok = out_ok && !s.meets_non_expressive;
  }
  out_ok = out_ok && any;
  return in_ok || out_ok;
}

namespace {

// An expressive node of `s` whose output is read outside s (the BN aside) or is a graph output.
bool leaf_read_outside(const Graph& g, int bn, const Side& s) {
  for (int n : s.nodes) {
    if (kind_of(g.nodes[n]) != Kind::Expressive) continue;
    for (const std::string& out : g.nodes[n].outputs) {
      if (std::find(g.outputs.begin(), g.outputs.end(), out) != g.outputs.end()) return true;
      for (int c : g.consumers(out))
        if (c != bn && !s.nodes.count(c)) return true;
    }
  }
  return false;
}

}  // namespace

bool theorem_side_shares_a_producer(const Graph& g, int bn) {
  const Node& n = g.nodes[bn];
  if (const int p = g.producer(n.inputs[0]); p >= 0) {
    const Side s = grow(g, bn, p);
    if (!s.nodes.empty() && !s.meets_non_expressive && leaf_read_outside(g, bn, s)) return true;
  }
  for (int c : g.consumers(n.outputs[0])) {
    const Side s = grow(g, bn, c);
    if (!s.nodes.empty() && !s.meets_non_expressive && leaf_read_outside(g, bn, s)) return true;
  }
  return false;
}

int theorem_foldable_count(const Graph& g) {
  int k = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].op_type == "BatchNormalization" && theorem_foldable(g, static_cast<int>(i))) ++k;
  return k;
}

void set_bn_param(Graph& g, const std::string& bn, const std::string& param, int64_t channel, float value) {
  g.tensor(bn + "." + param).f32()[channel] = value;
}

void make_gamma_positive(Graph& g, const std::string& bn) {
  TensorDesc& t = g.tensor(bn + ".weight");
  float* p = t.f32();
  for (size_t i = 0; i < t.data.size() / 4; ++i) p[i] = std::fabs(p[i]);
}

const nlohmann::json& node_report(const nlohmann::json& report, const std::string& name) {
  for (const auto& n : report["nodes"])
    if (n["name"] == name) return n;
  throw std::runtime_error("no report entry for " + name);
}

zoo::ConvOptions conv_opts(int64_t pad, bool bias, int64_t groups) {
  zoo::ConvOptions o;
  o.pad = pad;
  o.bias = bias;
  o.groups = groups;
  return o;
}

}  // namespace frugal::fold_test
