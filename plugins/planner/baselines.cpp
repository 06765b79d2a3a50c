#include "baselines.h"

#include <algorithm>

namespace frugal::planner {

namespace {
bool within_latency(double phase_s, double latency_s) { return phase_s <= latency_s * (1.0 + 1e-12); }
}  // namespace

std::vector<Step> fixed_batch_steps(const CostTable& costs, int samples, int b) {
  std::vector<Step> steps;
  for (int first = 0; first < samples; first += b)
    for (int k = 0; k < costs.size(); ++k) steps.push_back({k, first, std::min(b, samples - first)});
  return steps;
}

BaselinePlan plan_fixed_batch(const CostTable& costs, int samples, uint64_t budget_bytes, double latency_s) {
  BaselinePlan p;
  uint64_t smallest = 0;
  for (int b = std::min(samples, costs.batch_max); b >= 1; --b) {
    std::vector<Step> steps = fixed_batch_steps(costs, samples, b);
    PlanCheck c = check_plan(costs, samples, steps);
    smallest = c.peak_bytes;
    if (c.peak_bytes > budget_bytes || !within_latency(c.max_phase_s, latency_s)) continue;
    p.ok = true;
    p.batch = b;
    p.steps = std::move(steps);
    p.check = std::move(c);
    return p;
  }
  p.error = smallest > budget_bytes
                ? "fixed batch: even batch 1 needs " + std::to_string(smallest) + " bytes, budget is " +
                      std::to_string(budget_bytes)
                : "fixed batch: no batch size meets the latency bound of " + std::to_string(latency_s) + " s";
  return p;
}

BaselinePlan plan_greedy(const CostTable& costs, const LinearChain& chain, int samples, uint64_t budget_bytes,
                         double latency_s) {
  BaselinePlan p;
  const int n = costs.size();
  for (int k = 0; k < n; ++k) {
    for (int first = 0; first < samples;) {
      // Samples [0, first) are past layer k, the others wait at its input.
      const uint64_t held = chain.boundary[k + 1] * first + chain.boundary[k] * (samples - first);
      int b = std::min(costs.batch_max, samples - first);
      while (b >= 1 && held + costs.out(k, b) + costs.ws(k, b) > budget_bytes) --b;
      if (b == 0) {
        p.error = "greedy: layer '" + costs.layers[k].name +
                  "' does not fit even at batch 1 while holding all " + std::to_string(samples) +
                  " samples (needs " + std::to_string(held + costs.out(k, 1) + costs.ws(k, 1)) +
                  " bytes, budget is " + std::to_string(budget_bytes) + ")";
        return p;
      }
      p.steps.push_back({k, first, b});
      p.batch = std::max(p.batch, b);
      first += b;
    }
  }
  p.check = check_plan(costs, samples, p.steps);
  if (!within_latency(p.check.max_phase_s, latency_s)) {
    p.error = "greedy: its single phase takes " + std::to_string(p.check.max_phase_s) +
              " s, above the latency bound of " + std::to_string(latency_s) + " s";
    return p;
  }
  p.ok = p.check.peak_bytes <= budget_bytes;  // by construction; the checker has the last word
  if (!p.ok) p.error = "greedy: internal error: plan exceeds the budget";
  return p;
}

}  // namespace frugal::planner
