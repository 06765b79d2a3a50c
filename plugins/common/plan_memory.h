// The memory of a plan before running it, by the common memory model
// (sample_store.h) over a byte counter: what both executors check a plan and a
// budget with, so that their refusals and their measured peaks agree.
#pragma once

#include <cstdint>

#include "common/layer_graph.h"
#include "common/plan.h"

namespace frugal::exec {

struct PlanMemory {
  uint64_t peak = 0;       // most bytes live at any moment
  int64_t peak_step = -1;  // step where it is reached; -1: while placing the inputs
};

// Validates `plan` for a request of `batch` samples and returns its memory.
// Throws frugal::Error naming the step at fault.
PlanMemory simulate_plan(const LayerGraph& m, const Plan& plan, int64_t batch);

// Throws sdk::Failure(FRUGAL_ERR_BUDGET) when `plan` does not fit `budget`:
// "needs X at step i (layer ...), budget is Y" (and the least budget that works
// when even one sample at a time does not fit).
void check_budget(const LayerGraph& m, const Plan& plan, int64_t batch, uint64_t budget);

}  // namespace frugal::exec
