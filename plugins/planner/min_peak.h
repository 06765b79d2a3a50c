// The smallest peak memory the extended family reaches on a Segment, in exact
// bytes (no units), with the plan that reaches it: the budget floor reported
// when a budget is too small, and the fallback plan when rounding to units
// leaves the time DP without a plan.
#pragma once

#include <cstdint>
#include <vector>

#include "cost_table.h"
#include "plan_check.h"
#include "segment.h"

namespace frugal::planner {

struct MinPeakPlan {
  uint64_t peak_bytes = 0;  // as the plan checker counts it
  std::vector<Step> steps;
};

// Minimises (peak, then total time) over the recurrences (a)-(c) of the
// extended DP and the special layers' branch orders, for `samples` samples.
// Cost O(n^3 r + n^2 r^2) per chain, no memory dimension.
MinPeakPlan min_peak_plan(const CostTable& costs, const Segment& segment, int samples);

}  // namespace frugal::planner
