// Timing in passes: the profiler measures every (layer, batch) of a table once
// per pass, the passes one after another, and keeps for each entry the pass
// with the smallest median. Why: on a shared or virtual machine the same
// kernel runs in stretches of seconds at two speeds (measured on the 2-core
// machine of docs/BENCHMARKS.md: a MobileNet-V2 plan at 6.8 ms or 10.6 ms per
// sample for seconds at a time, with nothing else running in the machine).
// The repetitions of one entry run back to back, inside one such stretch, so
// their spread does not show it; passes seconds apart do. The same holds for
// the per-step overhead runs (one set per pass, the smallest per-layer median
// kept), so an overhead is never a slow stretch minus a fast layer time.
#pragma once

#include <cstddef>
#include <vector>

namespace frugal {

// Timed runs per entry in each pass: the requested repeats shared out over
// the passes (rounded up, at least 1), so more passes cost few extra runs.
int repeats_per_pass(int repeats, int passes);

// The per-entry minimum over passes. Entries are numbered by the caller.
class FastestPass {
 public:
  explicit FastestPass(size_t entries) : best_(entries, -1.0), spread_(entries, 0.0) {}
  // Records a pass's median (and spread) for entry `i`; keeps the smaller median.
  void add(size_t i, double median, double spread);
  double median(size_t i) const { return best_.at(i); }  // -1 before any add
  double spread(size_t i) const { return spread_.at(i); }

 private:
  std::vector<double> best_, spread_;
};

}  // namespace frugal
