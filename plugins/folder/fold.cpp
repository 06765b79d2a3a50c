#include "folder/fold.h"

#include <algorithm>
#include <set>

#include "folder/bn_affine.h"
#include "folder/component.h"
#include "folder/constants.h"
#include "folder/feature_shapes.h"
#include "frugal/error.h"

namespace frugal::folding {

namespace {

enum class Method { BanOff, Naive };

// One BN of the input graph and what became of it.
struct BnRecord {
  std::string name;    // node name, as reported
  std::string output;  // its output value: identifies the node while the graph changes
  bool folded = false;
  bool permanent = false;  // refused for a reason no other fold can change
  FoldDirection direction = FoldDirection::Backward;
  std::vector<std::string> into, compensated;
  std::string reason;
};

std::string quoted_list(const std::vector<std::string>& names) {
  std::string s;
  for (size_t i = 0; i < names.size(); ++i) s += (i ? ", '" : "'") + names[i] + "'";
  return s;
}

int find_bn(const Graph& g, const std::string& output) {
  for (size_t i = 0; i < g.nodes.size(); ++i)
    if (is_batchnorm(g.nodes[i]) && !g.nodes[i].outputs.empty() && g.nodes[i].outputs[0] == output)
      return static_cast<int>(i);
  return -1;
}

void rename_value(Graph& g, const std::string& from, const std::string& to) {
  for (Node& n : g.nodes) {
    std::replace(n.inputs.begin(), n.inputs.end(), from, to);
    std::replace(n.outputs.begin(), n.outputs.end(), from, to);
  }
}

// Rewrites the expressive layers, then removes the BN: backward, the producer
// side now computes the BN's output, so the BN input takes the output's name;
// forward, the BN's readers read its input.
void apply_plan(Graph& g, const FoldPlan& plan, std::vector<std::string>& detached) {
  for (const ExpressiveEdit& e : plan.edits) apply_edit(g, e, detached);
  const Node bn = g.nodes[plan.bn_node];
  g.nodes.erase(g.nodes.begin() + plan.bn_node);
  for (size_t i = 1; i < bn.inputs.size(); ++i) detached.push_back(bn.inputs[i]);
  const std::string &x = bn.inputs[0], &y = bn.outputs[0];
  if (plan.direction == FoldDirection::Backward) {
    rename_value(g, x, y);
    if (g.has_tensor(x) && !g.tensor(x).is_initializer) g.tensors.erase(x);
  } else {
    rename_value(g, y, x);
    if (g.has_tensor(y) && !g.tensor(y).is_initializer) g.tensors.erase(y);
  }
}

// Drops the tensors (and Constant nodes) that folding left without a reader.
void drop_detached(Graph& g, const std::vector<std::string>& detached) {
  std::set<std::string> keep(g.inputs.begin(), g.inputs.end());
  keep.insert(g.outputs.begin(), g.outputs.end());
  for (const std::string& name : std::set<std::string>(detached.begin(), detached.end())) {
    if (keep.count(name) || use_count(g, name) > 0) continue;
    const int p = g.producer(name);
    if (p >= 0) {
      if (g.nodes[p].op_type != "Constant" || g.nodes[p].outputs.size() != 1) continue;
      g.nodes.erase(g.nodes.begin() + p);
    }
    g.tensors.erase(name);
    g.initializer_order.erase(std::remove(g.initializer_order.begin(), g.initializer_order.end(), name),
                              g.initializer_order.end());
  }
}

// Prefer the plan that compensates least (inverse updates divide by a), then backward.
const PlanAttempt* choose(const PlanAttempt& backward, const PlanAttempt& forward) {
  if (backward.plan && forward.plan)
    return forward.plan->compensated.size() < backward.plan->compensated.size() ? &forward : &backward;
  if (backward.plan) return &backward;
  if (forward.plan) return &forward;
  return nullptr;
}

FoldResult run_fold(const Graph& input, Method method, const FoldOptions& options) {
  Graph g = input;
  const ShapeMap shapes = infer_feature_shapes(g);
  SearchOptions search;
  search.sequential_only = method == Method::Naive;
  search.max_branches = options.max_branches;

  std::vector<BnRecord> records;
  for (const Node& n : g.nodes)
    if (is_batchnorm(n)) {
      BnRecord r;
      r.name = n.name.empty() ? (n.outputs.empty() ? std::string("?") : n.outputs[0]) : n.name;
      r.output = n.outputs.empty() ? std::string() : n.outputs[0];
      if (r.output.empty()) {
        r.permanent = true;
        r.reason = "kept: its output is unnamed";
      }
      records.push_back(std::move(r));
    }

  std::vector<std::string> detached;
  int passes = 0, folded = 0;
  // A fold can open others (BN -> BN, a compensation that needed the other BN
  // gone), so sweep until a pass changes nothing.
  for (bool progress = true; progress;) {
    progress = false;
    ++passes;
    for (BnRecord& r : records) {
      if (r.folded || r.permanent) continue;
      const int idx = find_bn(g, r.output);
      if (idx < 0) throw Error("folder lost track of BatchNormalization '" + r.name + "'");
      const BnReading bn = read_batchnorm(g, g.nodes[idx]);
      if (!bn.ok) {
        r.permanent = true;
        r.reason = "kept: " + bn.reason;
        continue;
      }
      PlanAttempt backward, forward;
      backward.reason = "not tried (disabled by options)";
      forward.reason = backward.reason;
      if (options.allow_backward)
        backward = plan_fold(g, shapes, idx, bn.affine, FoldDirection::Backward, search);
      if (options.allow_forward)
        forward = plan_fold(g, shapes, idx, bn.affine, FoldDirection::Forward, search);
      const PlanAttempt* chosen = choose(backward, forward);
      if (!chosen) {
        r.reason = "kept: backward side " + backward.reason + "; forward side " + forward.reason;
        continue;
      }
      const FoldPlan& plan = *chosen->plan;
      apply_plan(g, plan, detached);
      r.folded = true;
      r.direction = plan.direction;
      r.into = plan.into;
      r.compensated = plan.compensated;
      r.reason = std::string("folded ") + direction_name(plan.direction) +
                 (plan.into.empty() ? std::string(": nothing reads its output, so it is simply removed")
                                    : " into " + quoted_list(plan.into));
      if (!plan.compensated.empty()) r.reason += "; compensated " + quoted_list(plan.compensated);
      ++folded;
      progress = true;
    }
  }

  FoldResult result;
  if (folded == 0) {
    result.graph = input;  // nothing changed: hand back the input exactly
  } else {
    drop_detached(g, detached);
    g.topological_sort();  // also checks that every value is still defined
    result.graph = std::move(g);
  }
  const int64_t before = input.parameter_count(), after = result.graph.parameter_count();
  nlohmann::json nodes = nlohmann::json::array();
  for (const BnRecord& r : records)
    nodes.push_back({{"name", r.name},
                     {"folded", r.folded},
                     {"direction", r.folded ? direction_name(r.direction) : "none"},
                     {"into", r.into},
                     {"compensated", r.compensated},
                     {"reason", r.reason}});
  result.report = {{"method", method == Method::BanOff ? "banoff" : "naive"},
                   {"bn_total", records.size()},
                   {"bn_folded", folded},
                   {"parameters_before", before},
                   {"parameters_after", after},
                   {"parameters_removed", before - after},
                   {"passes", passes},
                   {"nodes", nodes}};
  return result;
}

}  // namespace

FoldOptions parse_fold_options(const nlohmann::json& options) {
  FoldOptions o;
  if (options.is_null()) return o;
  if (!options.is_object()) throw Error("folder options must be a JSON object, got: " + options.dump());
  for (const auto& kv : options.items()) {
    const std::string& key = kv.key();
    const nlohmann::json& v = kv.value();
    if (key == "allow_backward" || key == "allow_forward") {
      if (!v.is_boolean()) throw Error("folder option '" + key + "' must be true or false, got " + v.dump());
      (key == "allow_backward" ? o.allow_backward : o.allow_forward) = v.get<bool>();
    } else if (key == "max_branches") {
      if (!v.is_number_integer() || v.get<int64_t>() < 1 || v.get<int64_t>() > 1000000)
        throw Error("folder option 'max_branches' must be an integer in [1, 1000000], got " + v.dump());
      o.max_branches = v.get<int>();
    } else {
      throw Error("unknown folder option '" + key + "' (known: allow_backward, allow_forward, max_branches)");
    }
  }
  return o;
}

FoldResult fold_banoff(const Graph& g, const FoldOptions& options) {
  return run_fold(g, Method::BanOff, options);
}
FoldResult fold_naive(const Graph& g, const FoldOptions& options) {
  return run_fold(g, Method::Naive, options);
}

}  // namespace frugal::folding
