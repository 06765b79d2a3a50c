// The smallest peak memory any schedule of the extended family reaches, in exact
// bytes (no units), with the plan that reaches it: the budget floor reported
// when a budget is too small, and the fallback plan when rounding to units
// leaves the time DP without a plan.
#pragma once

#include <cstdint>
#include <vector>

#include "cost_table.h"
#include "linear_chain.h"
#include "plan_check.h"

namespace frugal::planner {

struct MinPeakPlan {
  uint64_t peak_bytes = 0;  // as the plan checker counts it
  std::vector<Step> steps;
};

// Minimises (peak, then total time) over the extended recurrences (a)-(c) for
// `samples` samples. Cost O(n^3 r + n^2 r^2), no memory dimension.
MinPeakPlan min_peak_plan(const CostTable& costs, const LinearChain& chain, int samples);

}  // namespace frugal::planner
