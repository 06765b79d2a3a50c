// The extended DP (chain_dp.h) over a Segment: a layer takes one step of batch
// b; a special layer takes the best of its variants, each planned by its own
// extended DP. Owns the variant planners its trace-back calls into.
#pragma once

#include <memory>
#include <vector>

#include "chain_dp.h"
#include "cost_table.h"
#include "memory_units.h"
#include "segment.h"

namespace frugal::planner {

class SegmentPlanner {
 public:
  SegmentPlanner(const CostTable& costs, Segment segment, const MemoryUnits& units, int samples,
                 double latency_s);
  SegmentPlanner(const SegmentPlanner&) = delete;  // the DP's trace-back refers back to this object
  SegmentPlanner& operator=(const SegmentPlanner&) = delete;

  const ChainDP& dp() const { return *dp_; }
  const Segment& segment() const { return seg_; }
  // Per-sample seconds for b samples through the whole segment with m units.
  float whole(int b, int m) const { return dp_->value(0, seg_.size() - 1, b, m); }

 private:
  float special_value(int e, int b, int m, int* best_variant) const;

  Segment seg_;
  std::vector<std::vector<std::unique_ptr<SegmentPlanner>>> variants_;  // per element
  std::unique_ptr<ChainDP> dp_;
};

}  // namespace frugal::planner
