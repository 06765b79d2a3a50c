-- frugal plan: choose a batch size per layer under a memory budget (VBS) and compare with fixed batch
-- usage: frugal plan --costs COSTS.json --budget 20MB --batch 12 [--unit BYTES]
--                    [--planner vbs|fbs|greedy] [--latency S] [--json] [-o plan.json]
--        frugal plan --costs COSTS.json --show plan.json
--   --costs F      a cost table (frugal profile -o F)
--   --budget B     memory for the whole request: activations, workspace, and the
--                  request's own inputs and outputs (e.g. 20MB, 64MiB, bytes)
--   --batch N      samples in the request
--   --unit U       the planner's memory unit (default budget/256, rounded up);
--                  the budget is rounded down and needs up, so plans stay feasible
--   --planner P    vbs (default: variable batch size, never worse than the
--                  baselines), fbs (fixed batch size) or greedy (greedy VBS)
--   --latency S    bound on each phase's seconds (vbs)
--   --json         print the plan as JSON instead of the summary
--   -o FILE        write the plan as JSON (for frugal run --plan FILE)
--   --show F       print the summary of a plan written before (checked against
--                  the cost table: same layers)
-- The summary gives time per sample and peak memory predicted by the cost table,
-- the fixed-batch and greedy baselines, and per layer the batch size of its steps
-- in each phase with the memory it leaves unused, for the plan and for fixed batch.
local argparse = require("argparse")
local common = require("cli_common")
local summary = require("plan_summary")

local usage = "frugal plan --costs COSTS.json --budget 20MB --batch 12 [--unit BYTES] " ..
              "[--planner vbs|fbs|greedy] [--latency S] [--json] [-o plan.json] | --costs COSTS.json --show plan.json"
local a = argparse.parse(common.short_output(arg, "output"), {
  usage = usage,
  options = {costs = "string", budget = "bytes", batch = "integer", unit = "bytes", planner = "string",
             latency = "number", json = "flag", output = "string", show = "string"},
  defaults = {planner = "vbs"},
})
if not a.costs then common.fail("--costs COSTS.json is required (make one with frugal profile -o)\nusage: " .. usage, 2) end
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

if a.show then
  local plan = common.try(frugal.load_json, a.show)
  if type(plan) ~= "table" or type(plan.steps) ~= "table" then common.fail(a.show .. " is not a plan (no \"steps\")") end
  local names, set = layer_names(costs)
  local plan_layers = {}
  for _, l in ipairs(plan.layers or {}) do plan_layers[#plan_layers + 1] = l.name end
  for _, s in ipairs(plan.steps) do plan_layers[#plan_layers + 1] = s.layer end
  for _, n in ipairs(plan_layers) do
    if not set[n] then
      common.fail(string.format("%s was made for another model%s: its layer '%s' is not in the cost table %s " ..
        "(model '%s', layers %s ...)", a.show, plan.model and (" ('" .. plan.model .. "')") or "", tostring(n), a.costs,
        tostring(costs.model), table.concat(names, ", ", 1, math.min(#names, 5))))
    end
  end
  if plan.layers and #plan.layers ~= #names then
    common.fail(string.format("%s was made for another model: it has %d layers, the cost table %s has %d",
      a.show, #plan.layers, a.costs, #names))
  end
  if a.json then print(frugal.json_encode(plan, 1)) else summary.print(plan) end
  return
end

if not a.budget then common.fail("--budget is required (e.g. --budget 20MB)\nusage: " .. usage, 2) end
if not a.batch then common.fail("--batch is required (samples in the request, e.g. --batch 12)\nusage: " .. usage, 2) end
if a.batch < 1 then common.fail("--batch must be >= 1 (samples in the request), got " .. a.batch, 2) end
if a.budget < 1 then common.fail("--budget must be positive", 2) end
if a.unit and a.unit < 1 then common.fail("--unit must be positive", 2) end
if a.latency and not (a.latency > 0) then common.fail("--latency must be a positive number of seconds", 2) end

local ok, plan = pcall(frugal.plan, costs, {planner = a.planner, budget = a.budget, batch = a.batch, unit = a.unit,
                                            latency = a.latency})
if not ok then
  local msg = common.message(plan)
  -- Name the file rather than "cost table" when the table itself is at fault.
  msg = msg:gsub(": cost table: ", ": " .. a.costs .. ": ", 1)
  local need = msg:match("needs at least (%d+) bytes") or msg:match("needs (%d+) bytes")
  if need and tonumber(need) >= 10000 then msg = msg .. " (that is " .. common.bytes(tonumber(need)) .. ")" end
  common.fail(msg)
end

if a.output then common.try(frugal.save_json, plan, a.output) end
if a.json then
  print(frugal.json_encode(plan, 1))
else
  print("costs       " .. a.costs .. " (model '" .. tostring(costs.model) .. "', executor " .. tostring(costs.executor) .. ")")
  summary.print(plan)
  if a.output then print("wrote       " .. a.output) end
end
