#include "common/plan_memory.h"

#include <string>

#include "common/io_checks.h"
#include "common/sample_store.h"
#include "frugal/plugin_sdk.hpp"

namespace frugal::exec {

PlanMemory simulate_plan(const LayerGraph& m, const Plan& plan, int64_t batch) {
  CountingMemory mem;
  SampleStore store(m, mem, batch);
  store.place_inputs();
  PlanMemory pm;
  pm.peak = mem.live_bytes();
  store.drop_unread_inputs();
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep& s = plan.steps[i];
    store.check_ready(i, s);
    ChunkMemory::Id ws = 0;
    bool has_ws = false;
    const ChunkMemory::Id out = store.begin_step(s, m.layer_bytes(s.layer, s.count).ws_bytes, ws, has_ws);
    if (mem.live_bytes() > pm.peak) {
      pm.peak = mem.live_bytes();
      pm.peak_step = int64_t(i);
    }
    store.end_step(s, out, ws, has_ws);
  }
  store.check_complete();
  return pm;
}

void check_budget(const LayerGraph& m, const Plan& plan, int64_t batch, uint64_t budget) {
  const PlanMemory pm = simulate_plan(m, plan, batch);
  if (pm.peak <= budget) return;
  std::string msg = "needs " + format_bytes(pm.peak);
  if (pm.peak_step < 0)
    msg += " to hold the request's " + std::to_string(batch) + " input sample" + (batch == 1 ? "" : "s");
  else
    msg += " at step " + std::to_string(pm.peak_step) + " (" +
           describe_step(m, plan.steps[size_t(pm.peak_step)]) + ")";
  msg += ", budget is " + format_bytes(budget);
  const PlanMemory one = simulate_plan(m, one_sample_at_a_time_plan(m, batch), batch);
  if (budget < one.peak)
    msg +=
        "; even batch 1 does not fit: the smallest budget that works (one sample at a time through every "
        "layer" +
        std::string(batch > 1 ? ", the other samples' inputs and outputs held" : "") + ") is " +
        format_bytes(one.peak);
  throw sdk::Failure(FRUGAL_ERR_BUDGET, msg);
}

}  // namespace frugal::exec
