#include "fold_check.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "util/error.h"

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
  return static_cast<int>(std::count_if(g.nodes.begin(), g.nodes.end(), [&](const Node& n) { return n.op_type == op_type; }));
}

namespace {

enum class Kind { Expressive, Other, NonAffine };

// The paper's three categories (BN itself is affine, so it counts as "other").
Kind kind_of(const Node& n) {
  static const std::set<std::string> expressive{"Conv", "Gemm", "MatMul"};
  static const std::set<std::string> other{"Add",     "Concat",  "MaxPool",           "AveragePool",
                                           "Flatten", "Reshape", "GlobalAveragePool", "Identity",
                                           "Dropout", "BatchNormalization"};
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

}  // namespace frugal::fold_test
