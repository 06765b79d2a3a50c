// The paper's two baselines, charged under the same memory model as VBS (the
// request's waiting inputs and finished outputs count):
//   FBS     the largest uniform batch b that fits: the request runs in rounds of
//           b samples (the last round takes the rest), each round through every layer.
//   Greedy  layer by layer over all r samples; each step of a layer takes the
//           largest batch that fits while all r samples are held at its input or output.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "cost_table.h"
#include "linear_chain.h"
#include "plan_check.h"

namespace frugal::planner {

struct BaselinePlan {
  bool ok = false;
  std::string error;  // why there is no plan
  int batch = 0;      // FBS: the uniform batch; Greedy: the largest batch used
  std::vector<Step> steps;
  PlanCheck check;
};

// Rounds of `b` samples through every layer.
std::vector<Step> fixed_batch_steps(const CostTable& costs, int samples, int b);

BaselinePlan plan_fixed_batch(const CostTable& costs, int samples, uint64_t budget_bytes,
                              double latency_s = std::numeric_limits<double>::infinity());
BaselinePlan plan_greedy(const CostTable& costs, const LinearChain& chain, int samples, uint64_t budget_bytes,
                         double latency_s = std::numeric_limits<double>::infinity());

}  // namespace frugal::planner
