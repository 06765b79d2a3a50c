#include "branch_reduction.h"

#include <algorithm>
#include <set>

namespace frugal::planner {

namespace {

std::string layer_name(const CostTable& c, int t) {
  return t == kNetworkInput ? std::string("<network input>") : "'" + c.layers[t].name + "'";
}

// Fills elements for the region strictly between x and y (positions lo..hi-1).
bool reduce_region(const CostTable& c, const LinearChain& ch, int x, int y, BranchReduction& red) {
  const int lo = x + 1, hi = y;
  if (lo >= hi) return true;
  auto inside = [&](int t) { return t >= lo && t < hi; };
  const std::string where = "between main-path layers " + layer_name(c, x) + " and " + layer_name(c, y);
  MainPathElement s;
  for (int r = lo; r < hi; ++r) {
    const std::vector<int> ins = c.distinct_inputs(r);
    const std::vector<int>& cons = c.consumers[r];
    if (ins.size() != 1 || (ins[0] != x && !inside(ins[0]))) {
      red.why_not = "layer " + layer_name(c, r) + " " + where + " reads " + std::to_string(ins.size()) +
                    " tensors; the paper's reduction needs every branch to be a simple chain";
      return false;
    }
    if (cons.size() != 1 || (cons[0] != y && !inside(cons[0]))) {
      red.why_not = "layer " + layer_name(c, r) + " " + where + " feeds " + std::to_string(cons.size()) +
                    " layers; the paper's reduction needs every branch to be a simple chain";
      return false;
    }
    if (ins[0] != x) continue;
    std::vector<int> branch{r};
    while (c.consumers[branch.back()][0] != y) branch.push_back(c.consumers[branch.back()][0]);
    s.branches.push_back(std::move(branch));
  }
  size_t covered = 0;
  for (const auto& b : s.branches) covered += b.size();
  if (covered != static_cast<size_t>(hi - lo)) {
    red.why_not = "the layers " + where + " do not form branches from the one to the other";
    return false;
  }
  const std::vector<int> y_ins = c.distinct_inputs(y);
  if (std::find(y_ins.begin(), y_ins.end(), x) != y_ins.end()) s.branches.push_back({});  // identity shortcut
  std::set<int> reserved(y_ins.begin(), y_ins.end());
  reserved.insert(x);
  for (int t : reserved) s.reserved_per_sample += c.tensor_per_sample(t);
  s.in_per_sample = ch.boundary[lo];
  s.out_per_sample = ch.boundary[hi];
  red.elements.push_back(std::move(s));
  return true;
}

}  // namespace

BranchReduction reduce_branches(const CostTable& c, const LinearChain& ch) {
  BranchReduction red;
  const int n = c.size();
  // A layer is on every input-to-output path iff no tensor jumps over it.
  std::vector<char> jumped(n, 0);
  std::vector<std::string> outputs;
  for (int w = 0; w < n; ++w) {
    for (int u : c.distinct_inputs(w))
      for (int p = u + 1; p < w; ++p) jumped[p] = 1;
    if (c.kept_to_end(w)) {
      outputs.push_back(c.layers[w].name);
      for (int p = w + 1; p < n; ++p) jumped[p] = 1;
    }
  }
  if (outputs.size() != 1) {
    red.why_not =
        "the network has " + std::to_string(outputs.size()) + " outputs; the paper's reduction needs one";
    return red;
  }
  int x = kNetworkInput;
  for (int y = 0; y < n; ++y) {
    if (jumped[y]) continue;
    if (!reduce_region(c, ch, x, y, red)) return red;
    MainPathElement e;
    e.layer = y;
    e.in_per_sample = ch.boundary[y];
    e.out_per_sample = ch.boundary[y + 1];
    red.elements.push_back(std::move(e));
    x = y;
  }
  red.applicable = true;
  return red;
}

namespace {

// A branch as its own chain: first input and last output count as zero (they
// are reserved by the special layer).
ChainSpec branch_spec(const CostTable& c, const std::vector<int>& br, const MemoryUnits& units, int samples) {
  const int t = static_cast<int>(br.size());
  ChainSpec s;
  s.n = t;
  s.samples = samples;
  s.units = units.budget_units;
  s.extended = false;
  const size_t stride = static_cast<size_t>(s.units) + 1;
  s.in_units.assign(t, std::vector<int64_t>(samples + 1, 0));
  s.out_units.assign(t, std::vector<int64_t>(samples + 1, 0));
  s.exact.assign(t, std::vector<float>(static_cast<size_t>(samples) * stride, kInf));
  for (int e = 0; e < t; ++e) {
    const uint64_t in_ps = e == 0 ? 0 : c.out_per_sample(br[e - 1]);
    const uint64_t out_ps = e == t - 1 ? 0 : c.out_per_sample(br[e]);
    for (int w = 0; w <= samples; ++w) {
      s.in_units[e][w] = units.up(in_ps * w);
      s.out_units[e][w] = units.up(out_ps * w);
    }
    for (int b = 1; b <= std::min(samples, c.batch_max); ++b) {
      const uint64_t out = e == t - 1 ? 0 : c.out(br[e], b);
      const int64_t need = units.up(in_ps * b + out + c.ws(br[e], b));
      for (int64_t m = need; m <= s.units; ++m)
        s.exact[e][(b - 1) * stride + m] = static_cast<float>(c.time(br[e], b));
    }
  }
  s.emit_exact = [br](int e, int b, int, std::vector<LayerRun>& out) { out.push_back({br[e], b}); };
  return s;
}

}  // namespace

PaperPlanner::PaperPlanner(const CostTable& c, const LinearChain& ch, const MemoryUnits& units, int samples,
                           double latency_s)
    : reduction_(reduce_branches(c, ch)), units_(units) {
  if (!reduction_.applicable) return;
  const auto& els = reduction_.elements;
  const int n = static_cast<int>(els.size());
  branch_dps_.resize(n);
  ChainSpec s;
  s.n = n;
  s.samples = samples;
  s.units = units.budget_units;
  s.extended = false;
  s.latency_s = latency_s;
  const size_t stride = static_cast<size_t>(s.units) + 1;
  s.in_units.assign(n, std::vector<int64_t>(samples + 1));
  s.out_units.assign(n, std::vector<int64_t>(samples + 1));
  s.exact.assign(n, std::vector<float>(static_cast<size_t>(samples) * stride, kInf));
  for (int e = 0; e < n; ++e) {
    const MainPathElement& el = els[e];
    for (int w = 0; w <= samples; ++w) {
      s.in_units[e][w] = units.up(el.in_per_sample * w);
      s.out_units[e][w] = units.up(el.out_per_sample * w);
    }
    float* ex = s.exact[e].data();
    if (el.layer >= 0) {
      for (int b = 1; b <= std::min(samples, c.batch_max); ++b) {
        const int64_t need = units.up(ch.step_need(c, el.layer, b));
        for (int64_t m = need; m <= s.units; ++m)
          ex[(b - 1) * stride + m] = static_cast<float>(c.time(el.layer, b));
      }
      continue;
    }
    for (const auto& br : el.branches)
      if (!br.empty())
        branch_dps_[e].push_back(std::make_unique<ChainDP>(branch_spec(c, br, units, samples)));
    for (int b = 1; b <= samples; ++b) {
      const int64_t reserve = units.up(el.reserved_per_sample * b);
      for (int64_t m = reserve; m <= s.units; ++m) {
        float sum = 0.0f;
        for (const auto& dp : branch_dps_[e])
          sum += dp->value(0, dp->spec().n - 1, b, static_cast<int>(m - reserve));
        ex[(b - 1) * stride + m] = sum;
      }
    }
  }
  s.emit_exact = [this](int e, int b, int m, std::vector<LayerRun>& out) {
    const MainPathElement& el = reduction_.elements[e];
    if (el.layer >= 0) {
      out.push_back({el.layer, b});
      return;
    }
    // Branches one after another, each on all b samples.
    const int mb = m - static_cast<int>(units_.up(el.reserved_per_sample * b));
    for (const auto& dp : branch_dps_[e]) dp->trace(0, dp->spec().n - 1, b, mb, out);
  };
  main_ = std::make_unique<ChainDP>(std::move(s));
}

}  // namespace frugal::planner
