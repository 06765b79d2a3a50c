#include "folder/component.h"

#include <algorithm>
#include <deque>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "folder/affine_ops.h"

namespace frugal::folding {

const char* direction_name(FoldDirection d) { return d == FoldDirection::Backward ? "backward" : "forward"; }

namespace {

struct Use {
  int node;
  size_t slot;
};

// Who produces and who reads each value, built once per search.
struct Adjacency {
  std::map<std::string, int> producer;
  std::map<std::string, std::vector<Use>> consumers;
  std::set<std::string> inputs, outputs;

  explicit Adjacency(const Graph& g)
      : inputs(g.inputs.begin(), g.inputs.end()), outputs(g.outputs.begin(), g.outputs.end()) {
    for (size_t i = 0; i < g.nodes.size(); ++i) {
      const Node& n = g.nodes[i];
      for (const std::string& o : n.outputs)
        if (!o.empty()) producer[o] = static_cast<int>(i);
      for (size_t s = 0; s < n.inputs.size(); ++s)
        if (!n.inputs[s].empty()) consumers[n.inputs[s]].push_back({static_cast<int>(i), s});
    }
  }
  const std::vector<Use>& uses(const std::string& v) const {
    static const std::vector<Use> none;
    auto it = consumers.find(v);
    return it == consumers.end() ? none : it->second;
  }
};

// A unit of work: visit a value (node < 0), or visit a node reached through `value`.
struct Task {
  int node = -1;
  std::string value;
};

// Everything decided so far on one branch of the search. Maps are in the
// direction's own convention: backward new = s*old + t, forward old = s*new + t.
struct State {
  std::map<std::string, FeatureMap> maps;
  std::set<int> visited;  // non-expressive nodes already propagated through
  std::map<int, FeatureMap> input_edits, output_edits;
  std::deque<Task> queue;
  std::deque<Task> deferred;  // Concats waiting to learn their other inputs' maps
};

using Assignment = std::vector<std::pair<std::string, FeatureMap>>;

enum class Step { Ok, Fail, Defer, Branch };

std::string dims_str(const std::vector<int64_t>& d) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < d.size(); ++i) os << (i ? "," : "") << d[i];
  os << "]";
  return os.str();
}

int64_t product_from(const std::vector<int64_t>& d, size_t from) {
  int64_t p = 1;
  for (size_t i = from; i < d.size(); ++i) p *= d[i];
  return p;
}

class Search {
 public:
  Search(const Graph& g, const ShapeMap& shapes, int bn, FoldDirection dir, const SearchOptions& opt)
      : g_(g), shapes_(shapes), adj_(g), bn_(bn), dir_(dir), opt_(opt) {}

  PlanAttempt solve(const BnAffine& affine) {
    PlanAttempt result;
    const Node& bn = g_.nodes[bn_];
    const std::string& x = bn.inputs[0];
    const std::string& y = bn.outputs[0];
    const size_t channels = affine.scale.size();
    if (auto sx = shape_of(shapes_, x);
        sx && (sx->size() < 2 || (*sx)[1] != static_cast<int64_t>(channels))) {
      result.reason = "input '" + x + "' has shape " + dims_str(*sx) + ", but the parameters have " +
                      std::to_string(channels) + " channels";
      return result;
    }
    State st;
    FeatureMap bn_map{affine.scale, affine.shift};
    // The side that keeps its values as they are holds the identity.
    const std::string& moving = dir_ == FoldDirection::Backward ? x : y;
    const std::string& fixed = dir_ == FoldDirection::Backward ? y : x;
    st.maps[fixed] = FeatureMap::identity(channels);
    st.maps[moving] = bn_map;
    st.queue.push_back({-1, moving});
    if (!run(std::move(st))) {
      result.reason = first_failure_.empty() ? "no consistent assignment" : first_failure_;
      return result;
    }
    result.plan = make_plan();
    return result;
  }

 private:
  Step fail(const std::string& why) {
    if (first_failure_.empty()) first_failure_ = why;
    return Step::Fail;
  }

  bool run(State st) {
    for (;;) {
      Task t;
      bool defaults = false;
      if (!st.queue.empty()) {
        t = std::move(st.queue.front());
        st.queue.pop_front();
      } else if (!st.deferred.empty()) {
        t = std::move(st.deferred.front());
        st.deferred.pop_front();
        defaults = true;
      } else {
        final_ = std::move(st);
        return true;
      }
      const Step step = t.node < 0 ? visit_value(st, t.value) : visit_node(st, t.node, t.value, defaults);
      switch (step) {
        case Step::Ok:
          break;
        case Step::Fail:
          return false;
        case Step::Defer:
          st.deferred.push_back(t);
          break;
        case Step::Branch: {
          std::vector<Assignment> options = std::move(options_);
          for (const Assignment& option : options) {
            if (++branches_ > opt_.max_branches) {
              fail("gave up after " + std::to_string(opt_.max_branches) + " alternatives at Adds");
              return false;
            }
            State copy = st;
            bool ok = true;
            for (const auto& vm : option) ok = ok && assign(copy, vm.first, vm.second);
            if (ok && run(std::move(copy))) return true;
          }
          return false;
        }
      }
    }
  }

  // Records the map of `v`; a value reached twice must get the same map.
  bool assign(State& st, const std::string& v, const FeatureMap& m) {
    auto it = st.maps.find(v);
    if (it != st.maps.end()) {
      if (same_map(it->second, m)) return true;
      fail("'" + v + "' would need two different maps (paths through the component disagree)");
      return false;
    }
    st.maps[v] = m;
    if (!m.is_identity()) st.queue.push_back({-1, v});  // unchanged values do not spread
    return true;
  }

  Step visit_value(State& st, const std::string& v) {
    if (adj_.outputs.count(v)) return fail("reaches the graph output '" + v + "'");
    auto p = adj_.producer.find(v);
    if (p == adj_.producer.end()) {
      if (adj_.inputs.count(v)) return fail("reaches the graph input '" + v + "'");
      return fail("reaches the constant '" + v + "'");
    }
    if (p->second != bn_) st.queue.push_back({p->second, v});
    const std::vector<Use>& uses = adj_.uses(v);
    if (opt_.sequential_only && uses.size() > 1)
      return fail("'" + v + "' is read by " + std::to_string(uses.size()) +
                  " nodes, and the naive method folds along chains only");
    for (const Use& u : uses)
      if (u.node != bn_) st.queue.push_back({u.node, v});
    return Step::Ok;
  }

  Step visit_node(State& st, int n, const std::string& via, bool defaults) {
    if (st.visited.count(n)) return Step::Ok;
    const Node& node = g_.nodes[n];
    const OpInteraction cls = classify(g_, node, shapes_);
    const bool via_output = std::find(node.outputs.begin(), node.outputs.end(), via) != node.outputs.end();
    const FeatureMap m = st.maps.at(via);
    if (cls.kind == Interaction::NonAffine) return fail("reaches " + cls.why);
    // The map must enter through a data input or the (first) output.
    if (via_output ? via != node.outputs[0] : !reads_only_as_data(node, via))
      return fail(describe_node(node) + " reads '" + via + "' as a parameter");
    switch (cls.kind) {
      case Interaction::Expressive:
        return expressive(st, n, via_output, m);
      case Interaction::Sums:
        return sums(st, n, via, m);
      case Interaction::ChannelRemap:
        return node.op_type == "Concat" ? concat(st, n, via, via_output, m, defaults)
                                        : regroup_node(st, n, via_output, m);
      default:
        return pass_through(st, n, via_output, m, cls);
    }
  }

  bool reads_only_as_data(const Node& node, const std::string& v) const {
    const std::vector<size_t> data = data_inputs(node);
    for (size_t s = 0; s < node.inputs.size(); ++s)
      if (node.inputs[s] == v && std::find(data.begin(), data.end(), s) == data.end()) return false;
    return true;
  }

  Step expressive(State& st, int n, bool via_output, const FeatureMap& m) {
    const Node& node = g_.nodes[n];
    auto features = expressive_features(g_, node, !via_output);
    if (!features || *features != static_cast<int64_t>(m.size()))
      return fail(describe_node(node) + (via_output ? " writes " : " reads ") +
                  (features ? std::to_string(*features) : std::string("an unknown number of")) +
                  " features where the map has " + std::to_string(m.size()));
    if (via_output) {
      if (st.output_edits.count(n)) return Step::Ok;
      if (dir_ == FoldDirection::Forward)
        if (int64_t k = m.first_zero_scale(); k >= 0)
          return fail("producer " + describe_node(node) +
                      " cannot be compensated: that needs 1/a, and a = 0 (gamma = 0) on feature " +
                      std::to_string(k));
      st.output_edits[n] = m;
      return Step::Ok;
    }
    if (st.input_edits.count(n)) return Step::Ok;
    if (dir_ == FoldDirection::Backward)
      if (int64_t k = m.first_zero_scale(); k >= 0)
        return fail("consumer " + describe_node(node) +
                    " cannot be compensated: that needs 1/a, and a = 0 (gamma = 0) on feature " +
                    std::to_string(k));
    if (!m.shift_is_zero() && node.op_type == "Conv") {
      const std::string pad = zero_padding(node, shapes_);
      if (!pad.empty())
        return fail("consumer " + describe_node(node) + " pads its input (" + pad +
                    "): padding inserts 0 where the unfolded network had the shift c, which is non-zero");
    }
    st.input_edits[n] = m;
    return Step::Ok;
  }

  Step pass_through(State& st, int n, bool via_output, const FeatureMap& m, const OpInteraction& cls) {
    const Node& node = g_.nodes[n];
    if (cls.kind == Interaction::CommutesIfScaleNonNegative)
      if (int64_t k = m.first_negative_scale(); k >= 0)
        return fail(describe_node(node) + " sees a negative scale (a < 0 on feature " + std::to_string(k) +
                    "): the maximum would turn into a minimum");
    if (cls.kind == Interaction::CommutesScaleOnly && !m.shift_is_zero()) return fail(cls.why);
    const std::string& other = via_output ? node.inputs[0] : node.outputs[0];
    // classify() already proved from constants that the op keeps axis 1 (Pad and
    // Resize check their pads, scales or sizes); a known shape is checked again.
    if (auto s = shape_of(shapes_, other); s && (s->size() < 2 || (*s)[1] != static_cast<int64_t>(m.size())))
      return fail(describe_node(node) + " changes the channel count (" + dims_str(*s) + ")");
    st.visited.insert(n);
    return assign(st, other, m) ? Step::Ok : Step::Fail;
  }

  // Add: s (u + w) + t = (s u + t_u) + (s w + t_w) with t_u + t_w = t. Which input
  // takes the shift is free; both choices are tried.
  Step sums(State& st, int n, const std::string& via, const FeatureMap& m) {
    const Node& node = g_.nodes[n];
    if (node.inputs.size() != 2) return fail(describe_node(node) + " does not have two inputs");
    if (opt_.sequential_only)
      return fail(describe_node(node) + " joins two branches, and the naive method folds along chains only");
    const std::string &u = node.inputs[0], &w = node.inputs[1], &z = node.outputs[0];
    for (const std::string* v : {&u, &w, &z})
      if (!shape_of(shapes_, *v)) return fail(describe_node(node) + ": shape of '" + *v + "' unknown");
    const size_t rank = shape_of(shapes_, z)->size();
    for (const std::string* v : {&u, &w, &z}) {
      auto s = shape_of(shapes_, *v);
      if (s->size() != rank || rank < 2 || (*s)[1] != static_cast<int64_t>(m.size()))
        return fail(describe_node(node) + " broadcasts along the channel axis ('" + *v + "' has shape " +
                    dims_str(*s) + ")");
    }
    st.visited.insert(n);
    auto with_shift = [&](std::vector<double> t) { return FeatureMap{m.scale, std::move(t)}; };
    auto scaled = [&](const std::vector<double>& t, double k) {
      std::vector<double> r(t);
      for (double& e : r) e *= k;
      return r;
    };
    if (u == w) {  // z = 2u
      if (via == z) return assign(st, u, with_shift(scaled(m.shift, 0.5))) ? Step::Ok : Step::Fail;
      return assign(st, z, with_shift(scaled(m.shift, 2.0))) ? Step::Ok : Step::Fail;
    }
    std::map<std::string, const FeatureMap*> known;
    for (const std::string* v : {&u, &w, &z}) {
      auto it = st.maps.find(*v);
      if (it == st.maps.end()) continue;
      if (!same_map(FeatureMap{it->second.scale, m.shift}, m))
        return fail(describe_node(node) + " would add values with different scales");
      known[*v] = &it->second;
    }
    const size_t c = m.size();
    auto shift_of = [&](const std::string& v) { return known.at(v)->shift; };
    if (known.size() == 3) {
      std::vector<double> tz = shift_of(u);
      for (size_t i = 0; i < c; ++i) tz[i] += shift_of(w)[i];
      return same_map(with_shift(tz), *known.at(z))
                 ? Step::Ok
                 : fail(describe_node(node) + ": the shifts of its inputs do not add up");
    }
    if (known.size() == 2) {
      std::vector<double> t(c);
      if (!known.count(z)) {
        for (size_t i = 0; i < c; ++i) t[i] = shift_of(u)[i] + shift_of(w)[i];
        return assign(st, z, with_shift(t)) ? Step::Ok : Step::Fail;
      }
      const std::string& missing = known.count(u) ? w : u;
      const std::string& present = known.count(u) ? u : w;
      for (size_t i = 0; i < c; ++i) t[i] = shift_of(z)[i] - shift_of(present)[i];
      return assign(st, missing, with_shift(t)) ? Step::Ok : Step::Fail;
    }
    // Only `via` is known: choose where the shift goes.
    const std::vector<double> zero(c, 0.0);
    const std::string& other_in = via == u ? w : u;
    if (m.shift_is_zero()) {
      options_ = {via == z ? Assignment{{u, m}, {w, m}} : Assignment{{other_in, m}, {z, m}}};
    } else if (via == z) {
      options_ = {Assignment{{u, m}, {w, with_shift(zero)}}, Assignment{{u, with_shift(zero)}, {w, m}}};
    } else {
      options_ = {Assignment{{other_in, with_shift(zero)}, {z, m}},
                  Assignment{{z, with_shift(zero)}, {other_in, with_shift(scaled(m.shift, -1.0))}}};
    }
    return Step::Branch;
  }

  // Flatten / Reshape: the same elements regrouped along axis 1.
  Step regroup_node(State& st, int n, bool via_output, const FeatureMap& m) {
    const Node& node = g_.nodes[n];
    const std::string &in = node.inputs[0], &out = node.outputs[0];
    auto si = shape_of(shapes_, in), so = shape_of(shapes_, out);
    if (!si || !so) return fail(describe_node(node) + ": shapes unknown");
    if (si->size() < 2 || so->size() < 2 || product_from(*si, 1) != product_from(*so, 1))
      return fail(describe_node(node) + " moves elements across the batch axis (" + dims_str(*si) + " -> " +
                  dims_str(*so) + ")");
    if (node.op_type == "Flatten") {
      int64_t axis = node.attr_int("axis", 1);
      if (axis < 0) axis += static_cast<int64_t>(si->size());
      if (axis != 1)
        return fail(describe_node(node) + " with axis " + std::to_string(axis) + " merges the channel axis");
    }
    const int64_t fi = (*si)[1], ri = product_from(*si, 2), fo = (*so)[1], ro = product_from(*so, 2);
    if (static_cast<int64_t>(m.size()) != (via_output ? fo : fi))
      return fail(describe_node(node) + ": the map has " + std::to_string(m.size()) + " features");
    auto r = via_output ? regroup(m, ro, fi, ri) : regroup(m, ri, fo, ro);
    if (!r) return fail(describe_node(node) + " mixes features that carry different maps");
    st.visited.insert(n);
    return assign(st, via_output ? in : out, *r) ? Step::Ok : Step::Fail;
  }

  // Concat: on axis 1 each input owns a channel range of the output; inputs
  // outside the component keep the identity on their range.
  Step concat(State& st, int n, const std::string& via, bool via_output, const FeatureMap& m, bool defaults) {
    const Node& node = g_.nodes[n];
    if (opt_.sequential_only && node.inputs.size() > 1)
      return fail(describe_node(node) +
                  " joins several branches, and the naive method folds along chains only");
    auto sv = shape_of(shapes_, via);
    if (!sv) return fail(describe_node(node) + ": shape of '" + via + "' unknown");
    int64_t axis = node.attr_int("axis", 1);
    if (axis < 0) axis += static_cast<int64_t>(sv->size());
    const std::string& out = node.outputs[0];
    if (axis != 1) {  // channels untouched: every input carries the same map
      st.visited.insert(n);
      bool ok = assign(st, out, m);
      for (const std::string& in : node.inputs) ok = ok && assign(st, in, m);
      return ok ? Step::Ok : Step::Fail;
    }
    std::vector<int64_t> widths;
    for (const std::string& in : node.inputs) {
      auto s = shape_of(shapes_, in);
      if (!s || s->size() < 2) return fail(describe_node(node) + ": shape of '" + in + "' unknown");
      widths.push_back((*s)[1]);
    }
    if (via_output) {
      st.visited.insert(n);
      size_t begin = 0;
      for (size_t i = 0; i < node.inputs.size(); ++i) {
        if (begin + widths[i] > m.size())
          return fail(describe_node(node) + ": channel ranges exceed the map");
        if (!assign(st, node.inputs[i], slice(m, begin, widths[i]))) return Step::Fail;
        begin += widths[i];
      }
      return Step::Ok;
    }
    std::vector<FeatureMap> parts;
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      auto it = st.maps.find(node.inputs[i]);
      if (it != st.maps.end()) {
        parts.push_back(it->second);
      } else if (defaults) {
        parts.push_back(FeatureMap::identity(widths[i]));
      } else {
        return Step::Defer;  // another path may still reach this input
      }
    }
    st.visited.insert(n);
    bool ok = true;
    for (size_t i = 0; i < node.inputs.size(); ++i) ok = ok && assign(st, node.inputs[i], parts[i]);
    return ok && assign(st, out, join(parts)) ? Step::Ok : Step::Fail;
  }

  FoldPlan make_plan() const {
    FoldPlan plan;
    plan.bn_node = bn_;
    plan.direction = dir_;
    std::set<int> nodes;
    for (const auto& kv : final_.input_edits) nodes.insert(kv.first);
    for (const auto& kv : final_.output_edits) nodes.insert(kv.first);
    for (int n : nodes) {
      ExpressiveEdit e;
      e.node = n;
      if (auto it = final_.input_edits.find(n); it != final_.input_edits.end())
        e.input = input_update(it->second);
      if (auto it = final_.output_edits.find(n); it != final_.output_edits.end())
        e.output = output_update(it->second);
      plan.edits.push_back(std::move(e));
    }
    // Backward: producers absorb, readers are compensated; forward: the reverse.
    const auto& absorbing = dir_ == FoldDirection::Backward ? final_.output_edits : final_.input_edits;
    const auto& compensating = dir_ == FoldDirection::Backward ? final_.input_edits : final_.output_edits;
    for (const auto& kv : absorbing) plan.into.push_back(g_.nodes[kv.first].name);
    for (const auto& kv : compensating) plan.compensated.push_back(g_.nodes[kv.first].name);
    return plan;
  }

  // A producer must now write new = S*old + T.
  FeatureMap output_update(const FeatureMap& m) const {
    if (dir_ == FoldDirection::Backward) return m;  // new = s*old + t already
    FeatureMap r = m;                               // old = s*new + t  =>  new = old/s - t/s
    for (size_t i = 0; i < m.size(); ++i) {
      r.scale[i] = 1.0 / m.scale[i];
      r.shift[i] = -m.shift[i] / m.scale[i];
    }
    return r;
  }

  // A reader now receives `new` and must compute as if it read old = P*new + Q.
  FeatureMap input_update(const FeatureMap& m) const {
    if (dir_ == FoldDirection::Forward) return m;  // old = s*new + t already
    FeatureMap r = m;                              // new = s*old + t  =>  old = new/s - t/s
    for (size_t i = 0; i < m.size(); ++i) {
      r.scale[i] = 1.0 / m.scale[i];
      r.shift[i] = -m.shift[i] / m.scale[i];
    }
    return r;
  }

  const Graph& g_;
  const ShapeMap& shapes_;
  Adjacency adj_;
  int bn_;
  FoldDirection dir_;
  SearchOptions opt_;
  State final_;
  std::vector<Assignment> options_;
  std::string first_failure_;
  int branches_ = 0;
};

}  // namespace

PlanAttempt plan_fold(const Graph& g, const ShapeMap& shapes, int bn_node, const BnAffine& bn,
                      FoldDirection direction, const SearchOptions& options) {
  return Search(g, shapes, bn_node, direction, options).solve(bn);
}

}  // namespace frugal::folding
