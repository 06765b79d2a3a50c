#include "min_peak.h"

#include <algorithm>
#include <limits>
#include <memory>

#include "chain_dp.h"
#include "frugal/error.h"
#include "linear_chain.h"

namespace frugal::planner {

namespace {

constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();

struct Cell {
  uint64_t peak = kNever;
  double seconds = 0;  // total, not per sample
  int choice = 0;      // -1: one element at b; 0..n-1: all meet after k; n + b1: phase split
  bool better_than(uint64_t p, double s) const { return p < peak || (p == peak && s < seconds); }
};

uint64_t add(uint64_t a, uint64_t b) { return (a == kNever || b == kNever) ? kNever : a + b; }

class MinPeakDP {
 public:
  MinPeakDP(const CostTable& c, const Segment& s, int r) : c_(c), s_(s), n_(s.size()), r_(r) {
    subs_.resize(n_);
    for (int e = 0; e < n_; ++e)
      for (const Segment& v : s_.elements[e].variants)
        subs_[e].push_back(std::make_unique<MinPeakDP>(c, v, r));
    cells_.resize(static_cast<size_t>(n_) * (n_ + 1) / 2 * r_);
    for (int d = 0; d < n_; ++d)
      for (int i = 0; i + d < n_; ++i) fill(i, i + d);
  }
  const Cell& whole(int b) const { return at(0, n_ - 1, b); }

  void trace(int i, int j, int b, std::vector<LayerRun>& out) const {
    const Cell& x = at(i, j, b);
    if (x.peak == kNever) throw Error("planner: internal error: min-peak trace of an infeasible entry");
    if (x.choice < 0) {
      exact_trace(i, b, out);
    } else if (x.choice < n_) {
      trace(i, x.choice, b, out);
      trace(x.choice + 1, j, b, out);
    } else {
      const int b1 = x.choice - n_;
      trace(i, j, b1, out);
      trace(i, j, b - b1, out);
    }
  }

 private:
  const Cell& at(int i, int j, int b) const { return cells_[index(i, j, b)]; }
  size_t index(int i, int j, int b) const {
    size_t pair = static_cast<size_t>(i) * n_ - static_cast<size_t>(i) * (i - 1) / 2 + (j - i);
    return pair * r_ + (b - 1);
  }

  // Element e on all b samples at once: (peak, seconds), and the variant used.
  Cell exact(int e, int b, int* variant) const {
    const SegmentElement& el = s_.elements[e];
    Cell x;
    x.choice = -1;
    if (el.layer >= 0) {
      if (b <= c_.batch_max) {
        x.peak = layer_step_need(c_, s_, e, b);
        x.seconds = c_.time(el.layer, b) * b;
      }
      return x;
    }
    for (size_t v = 0; v < subs_[e].size(); ++v) {
      const Cell& w = subs_[e][v]->whole(b);
      if (w.peak != kNever && x.better_than(w.peak, w.seconds)) {
        x.peak = w.peak;
        x.seconds = w.seconds;
        *variant = static_cast<int>(v);
      }
    }
    return x;
  }

  void exact_trace(int e, int b, std::vector<LayerRun>& out) const {
    if (s_.elements[e].layer >= 0) {
      out.push_back({s_.elements[e].layer, b});
      return;
    }
    int variant = -1;
    exact(e, b, &variant);
    const MinPeakDP& v = *subs_[e][variant];
    v.trace(0, v.n_ - 1, b, out);
  }

  void fill(int i, int j) {
    for (int b = 1; b <= r_; ++b) {
      Cell& x = cells_[index(i, j, b)];
      int order;
      if (i == j) x = exact(i, b, &order);
      for (int k = i; k < j; ++k) {
        const Cell& a = at(i, k, b);
        const Cell& z = at(k + 1, j, b);
        if (a.peak == kNever || z.peak == kNever) continue;
        const uint64_t p = std::max(a.peak, z.peak);
        if (x.better_than(p, a.seconds + z.seconds)) x = {p, a.seconds + z.seconds, k};
      }
      for (int b1 = 1; b1 < b; ++b1) {
        const int b2 = b - b1;
        const Cell& a = at(i, j, b1);
        const Cell& z = at(i, j, b2);
        if (a.peak == kNever || z.peak == kNever) continue;
        const uint64_t p = std::max(add(s_.boundary[i] * b2, a.peak), add(s_.boundary[j + 1] * b1, z.peak));
        if (x.better_than(p, a.seconds + z.seconds)) x = {p, a.seconds + z.seconds, n_ + b1};
      }
    }
  }

  const CostTable& c_;
  const Segment& s_;
  int n_, r_;
  std::vector<std::vector<std::unique_ptr<MinPeakDP>>> subs_;  // per element: its variants
  std::vector<Cell> cells_;
};

}  // namespace

MinPeakPlan min_peak_plan(const CostTable& costs, const Segment& segment, int samples) {
  MinPeakDP dp(costs, segment, samples);
  std::vector<LayerRun> runs;
  dp.trace(0, segment.size() - 1, samples, runs);
  MinPeakPlan p;
  p.steps = assign_samples(runs, costs.size());
  p.peak_bytes = check_plan(costs, samples, p.steps).peak_bytes;
  return p;
}

}  // namespace frugal::planner
