-- frugal plan: choose a batch size per layer under a memory budget (VBS) and compare with fixed batch
-- The summary gives time per sample and peak memory predicted by the cost table,
-- the fixed-batch and greedy baselines, and per layer the sizes of its steps in
-- each phase with the memory it leaves unused, for the plan and for fixed batch.
local argparse = require("argparse")
local common = require("cli_common")
local summary = require("plan_summary")

local a = argparse.parse(arg, {
  options = {
    {"costs", "input", "a cost table (frugal profile -o FILE) (required)"},
    {"budget", "bytes", "memory for the whole request: activations, workspace, and the request's own inputs " ..
     "and outputs, e.g. 20MB, 64MiB or bytes (required unless --show)", min = 1},
    {"batch", "integer", "samples in the request (required unless --show)", min = 1},
    {"unit", "bytes", "the planner's memory unit; the budget is rounded down and needs up, so plans stay " ..
     "feasible", min = 1, default_text = "budget/256, rounded up"},
    {"planner", "string", "vbs (variable batch size, never worse than the baselines), fbs (fixed batch size), " ..
     "greedy (greedy VBS) or a planner plugin on FRUGAL_PLUGIN_PATH", default = "vbs"},
    {"latency", "number", "bound on each phase's seconds (vbs)", default_text = "none"},
    {"min_gain", "number", "take a VBS plan that differs from the faster of fixed batch and greedy only when it is predicted " ..
     "at least this fraction faster (frugal workflow and bench-vbs: 0.03; docs/PLANNER.md)", default = 0, min = 0,
     max = 0.99},
    {"output", "output", "write the plan as JSON (for frugal run --plan FILE, frugal plot)", short = "o",
     default_text = "not written"},
    {"show", "input", "print the summary of a plan written before (checked against --costs: same layers)",
     default_text = "plan anew from --budget and --batch"},
  },
  json = "print the plan as JSON instead of the summary",
})
if not a.costs then common.fail("--costs FILE is required (make one with frugal profile -o FILE)", 2) end
local costs = common.try(frugal.load_json, a.costs)

-- Only the names matter here; the planner checks everything else.
local function layer_names(table_)
  local names, set = {}, {}
  if type(table_) == "table" and type(table_.layers) == "table" then
    for _, l in ipairs(table_.layers) do
      if type(l) == "table" and l.name then names[#names + 1] = l.name; set[l.name] = true end
    end
  end
  return names, set
end

local function show(plan_file)
  local plan = common.try(frugal.load_json, plan_file)
  if type(plan) ~= "table" or type(plan.steps) ~= "table" then common.fail(plan_file .. " is not a plan (no \"steps\")") end
  local names, set = layer_names(costs)
  local plan_layers = {}
  for _, l in ipairs(plan.layers or {}) do plan_layers[#plan_layers + 1] = l.name end
  for _, s in ipairs(plan.steps) do plan_layers[#plan_layers + 1] = s.layer end
  for _, n in ipairs(plan_layers) do
    if not set[n] then
      common.fail(string.format("%s was made for another model%s: its layer '%s' is not in the cost table %s " ..
        "(model '%s', layers %s ...)", plan_file, plan.model and (" ('" .. plan.model .. "')") or "", tostring(n), a.costs,
        tostring(costs.model), table.concat(names, ", ", 1, math.min(#names, 5))))
    end
  end
  if plan.layers and #plan.layers ~= #names then
    common.fail(string.format("%s was made for another model: it has %d layers, the cost table %s has %d",
      plan_file, #plan.layers, a.costs, #names))
  end
  if a.json then print(frugal.json_encode(plan, 1)) else summary.print(plan) end
end

if a.show then return show(a.show) end
if not a.budget then common.fail("--budget is required (e.g. --budget 20MB)", 2) end
if not a.batch then common.fail("--batch is required (samples in the request, e.g. --batch 12)", 2) end
if a.latency and not (a.latency > 0) then common.fail("--latency must be a positive number of seconds", 2) end

local ok, plan = pcall(frugal.plan, costs, {planner = a.planner, budget = a.budget, batch = a.batch, unit = a.unit,
                                            latency = a.latency, min_gain = a.min_gain})
if not ok then
  if frugal.debug then error(plan, 0) end
  common.fail(common.planner_message(plan, a.costs))
end

if a.output then common.try(frugal.save_json, plan, a.output) end
if a.json then
  print(frugal.json_encode(plan, 1))
else
  print("costs       " .. a.costs .. " (model '" .. tostring(costs.model) .. "', executor " .. tostring(costs.executor) .. ")")
  summary.print(plan)
  if a.output then print("wrote       " .. a.output) end
end
