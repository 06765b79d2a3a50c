#include "min_peak.h"

#include <algorithm>
#include <limits>

#include "util/error.h"

namespace frugal::planner {

namespace {

constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();

struct Cell {
  uint64_t peak = kNever;
  double seconds = 0;  // total, not per sample
  int choice = 0;      // -1: one step; 0..n-1: meet at boundary after k; n + b1: phase split
  bool better_than(uint64_t p, double s) const { return p < peak || (p == peak && s < seconds); }
};

class MinPeakDP {
 public:
  MinPeakDP(const CostTable& c, const LinearChain& ch, int r) : c_(c), ch_(ch), n_(c.size()), r_(r) {
    cells_.resize(static_cast<size_t>(n_) * (n_ + 1) / 2 * r_);
    for (int d = 0; d < n_; ++d)
      for (int i = 0; i + d < n_; ++i) fill(i, i + d);
  }
  const Cell& at(int i, int j, int b) const { return cells_[index(i, j, b)]; }
  void trace(int i, int j, int b, std::vector<LayerRun>& out) const {
    const Cell& x = at(i, j, b);
    if (x.peak == kNever) throw Error("planner: internal error: min-peak trace of an infeasible entry");
    if (x.choice < 0) {
      out.push_back({i, b});
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
  size_t index(int i, int j, int b) const {
    size_t pair = static_cast<size_t>(i) * n_ - static_cast<size_t>(i) * (i - 1) / 2 + (j - i);
    return pair * r_ + (b - 1);
  }
  static uint64_t add(uint64_t a, uint64_t b) { return (a == kNever || b == kNever) ? kNever : a + b; }

  void fill(int i, int j) {
    for (int b = 1; b <= r_; ++b) {
      Cell& x = cells_[index(i, j, b)];
      if (i == j && b <= c_.batch_max) {
        x.peak = ch_.step_need(c_, i, b);
        x.seconds = c_.time(i, b) * b;
        x.choice = -1;
      }
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
        const uint64_t p = std::max(add(ch_.boundary[i] * b2, a.peak), add(ch_.boundary[j + 1] * b1, z.peak));
        if (x.better_than(p, a.seconds + z.seconds)) x = {p, a.seconds + z.seconds, n_ + b1};
      }
    }
  }

  const CostTable& c_;
  const LinearChain& ch_;
  int n_, r_;
  std::vector<Cell> cells_;
};

}  // namespace

MinPeakPlan min_peak_plan(const CostTable& costs, const LinearChain& chain, int samples) {
  MinPeakDP dp(costs, chain, samples);
  MinPeakPlan p;
  std::vector<LayerRun> runs;
  dp.trace(0, costs.size() - 1, samples, runs);
  p.steps = assign_samples(runs, costs.size());
  p.peak_bytes = check_plan(costs, samples, p.steps).peak_bytes;
  return p;
}

}  // namespace frugal::planner
