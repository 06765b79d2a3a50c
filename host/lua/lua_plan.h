// Planning in Lua:
//
//   plan = frugal.plan(costs, {planner = "vbs" | "fbs" | "greedy", budget = "20MB" or bytes,
//                              batch = 12, unit = bytes or "64kB", latency = seconds,
//                              methods = {...} (vbs only), table = false})
//
// costs: a cost table (frugal.profile, or a Lua table in the same format) or the
// path of a cost table JSON file. budget and batch (the request's sample count)
// are required. The plan is the planner plugin's JSON as a Lua table (docs/PLAN.md):
// steps = {{layer=, first=, count=}, ...}, peak_bytes, time_per_sample_s,
// phases, layers = {{name=, batches = {...}, unused_bytes=, fbs_batches=,
// fbs_unused_bytes=}, ...}, and for vbs baselines.fbs / baselines.greedy,
// min_budget_bytes, gain_vs_fbs. Run it with frugal.run(model, plan, inputs) or
// ex:run(inputs, {plan = plan}); save it with frugal.save_json(plan, path).
// A budget below every plan is refused with the smallest one that works.
#pragma once

#include <lua.hpp>

namespace frugal {

void open_lua_plan(lua_State* L, int module_index);

}  // namespace frugal
