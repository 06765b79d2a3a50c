// Any layer graph, taken in the table's execution order, is a chain for the DP:
// a sample that layers 0..k-1 have processed and layer k has not sits at
// boundary k and holds exactly the tensors produced before k that a layer at or
// after k still reads (or that are network outputs). That per-sample figure is
// exact under the executor's memory model, so the extended DP on this chain
// plans branched networks without approximation (docs/PLANNER.md).
#pragma once

#include <cstdint>
#include <vector>

#include "chain_dp.h"
#include "cost_table.h"
#include "plan_check.h"

namespace frugal::planner {

struct LinearChain {
  std::vector<uint64_t> boundary;  // n + 1 entries: bytes per sample at boundary k

  // Bytes while layer k runs on b samples with all b waiting at its input.
  uint64_t step_need(const CostTable& c, int k, int b) const {
    return boundary[k] * static_cast<uint64_t>(b) + c.out(k, b) + c.ws(k, b);
  }
};

LinearChain linearize(const CostTable& costs);

// Turns layer runs (in execution order) into steps, each layer taking samples
// first-in first-out.
std::vector<Step> assign_samples(const std::vector<LayerRun>& runs, int n_layers);

}  // namespace frugal::planner
