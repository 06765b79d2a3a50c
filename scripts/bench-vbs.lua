-- frugal bench-vbs: variable batch size (VBS) against fixed batch (FBS) and greedy over a sweep of memory budgets
-- The VBS paper's Figure 7 / Table II in form: per network and budget, the time
-- per sample of each plan as the planner predicts it (from the cost table) and
-- as measured by running the plan on the CPU executor inside an arena of
-- exactly the budget, and VBS's throughput gain over FBS (FBS time / VBS time
-- - 1), predicted and measured. Each network is folded (BaN-OFF) and profiled
-- once for batch sizes 1..N (cached on disk, as frugal workflow does).
local argparse = require("argparse")
local common = require("cli_common")
local bench = require("bench_common")

local a = argparse.parse(arg, {
  options = {
    {"nets", "string", "zoo networks, comma-separated, or \"all\" (the zoo builds them at 224x224)",
     default = "squeezenet1_1,mobilenet_v2,resnet18", metavar = "L"},
    {"batch", "integer", "samples in the request", default = 12, min = 1, max = 64},
    {"budgets", "integer", "budgets per network, evenly spaced from just above the smallest VBS plan to the " ..
     "whole batch's need (fixed batch N, no limit)", default = 6, min = 1, max = 50},
    {"repeat", "integer", "timed rounds per budget; each runs the VBS, FBS and greedy plans once, in turn; " ..
     "medians. One warm-up run per network", default = 3, min = 1},
    {"threads", "integer", "the CPU executor's threads", min = 1, default_text = "one per core"},
    {"no_cache", "flag", "profile again even if the cost table is cached"},
    {"fit", "flag", "plan on fitted tables (frugal profile --fit), not the raw ones"},
    {"explain", "flag", "after each budget's row, per plan: the executor's summed step times against the " ..
     "run's time, the arena's compactions and bytes moved, the step count"},
  },
  progress = true,
})
local progress = require("progress").new(a.quiet)
local nets = bench.nets(a.nets)
local B = a.batch
local PLANNERS = {"vbs", "fbs", "greedy"}

local function gain(t_fbs, t_vbs)
  if not t_fbs or not t_vbs then return "-" end
  return common.percent(t_fbs / t_vbs - 1)
end

local function bench_network(name, row)
  progress:stage(name .. ": folding")
  local original = common.load_model("zoo:" .. name)
  local folded = common.try(frugal.fold, original, {method = "banoff"})
  local costs, info = common.try(frugal.profile, folded, {executor = "cpu", threads = a.threads, upto = B,
                                                          cache = not a.no_cache, fit = a.fit, progress = not a.quiet})
  local function plan(planner, budget)
    return pcall(frugal.plan, costs, {planner = planner, budget = budget, batch = B})
  end
  local ok, whole_plan = plan("fbs", 1 << 50)
  if not ok then common.fail(name .. ": " .. common.message(whole_plan)) end
  local whole = whole_plan.peak_bytes
  local ok2, any = plan("vbs", whole)
  if not ok2 then common.fail(name .. ": " .. common.message(any)) end
  local smallest = any.min_budget_bytes

  local ex = common.try(frugal.executor, folded, {executor = "cpu", threads = a.threads, budget = whole})
  local x = common.try(frugal.random_input, folded, B, 0)
  progress:status(name .. ": warm-up")
  common.try(ex.run, ex, x)

  for k = 1, a.budgets do
    -- Evenly from 2% above the smallest plan (the memory unit rounds needs up) to the whole batch's need.
    local f = a.budgets == 1 and 1 or (k - 1) / (a.budgets - 1)
    local budget = math.floor(smallest * 1.02 + f * (whole - smallest * 1.02))
    local plans, variants = {}, {}
    for _, p in ipairs(PLANNERS) do
      local okp, pl = plan(p, budget)
      if okp then
        plans[p] = pl
        variants[#variants + 1] = {name = string.format("%s: budget %d/%d, %s", name, k, a.budgets, p), planner = p,
                                   plan = pl, peak = 0,
                                   run = function() return 0 end}
      else
        plans[p] = {error = common.message(pl)}
      end
    end
    common.try(ex.set_budget, ex, budget)
    for _, v in ipairs(variants) do
      v.step_sums = {}
      v.run = function()
        local _, rep = common.try(ex.run, ex, x, {plan = v.plan})
        v.peak = math.max(v.peak, rep.peak_bytes)
        local sum = 0
        for _, st in ipairs(rep.steps) do sum = sum + st.seconds end
        v.step_sums[#v.step_sums + 1] = sum
        v.compactions, v.moved = rep.compactions, rep.moved_bytes
        return rep.seconds
      end
    end
    bench.interleave(variants, a["repeat"], progress, {warmup = false})
    local measured, over = {}, false
    for _, v in ipairs(variants) do
      measured[v.planner] = v.median / B
      if v.peak > budget then over = true end
    end
    local function cell_pred(p) return plans[p].time_per_sample_s and common.seconds(plans[p].time_per_sample_s) or "-" end
    local function cell_meas(p) return measured[p] and common.seconds(measured[p]) or "-" end
    progress:done()
    row({
      k == 1 and name or "", common.bytes(budget), common.percent(budget / whole),
      cell_pred("vbs"), cell_meas("vbs"),
      plans.fbs.fbs_batch and tostring(plans.fbs.fbs_batch) or "-", cell_pred("fbs"), cell_meas("fbs"),
      cell_pred("greedy"), cell_meas("greedy"),
      gain(plans.fbs.time_per_sample_s, plans.vbs.time_per_sample_s), gain(measured.fbs, measured.vbs),
      over and "OVER" or "ok"})
    if a.explain then
      for _, v in ipairs(variants) do
        local steps = bench.median(v.step_sums) / B
        print(string.format("%16s%-6s %3d steps: pred %s, meas steps %s, meas run %s (overhead %s); " ..
          "%d compactions moved %s", "", v.planner, #v.plan.steps, common.seconds(v.plan.time_per_sample_s),
          common.seconds(steps), common.seconds(v.median / B), common.percent(v.median / B / steps - 1),
          v.compactions or 0, common.bytes(v.moved or 0)))
      end
    end
  end
  progress:done()
  return {smallest = smallest, whole = whole, layers = #costs.layers, cached = info.cached,
                profile_s = info.seconds}
end

print(bench.machine_line())
print(string.format("request     %d samples; CPU executor%s; BaN-OFF-folded networks; %d timed round%s per budget " ..
  "(VBS, FBS, greedy in turn), medians; %s cost tables", B, a.threads and (", " .. a.threads .. " threads") or "", a["repeat"],
  a["repeat"] == 1 and "" or "s", a.fit and "fitted (--fit)" or "measured (raw)"))
local t0 = frugal.clock()
local notes = {}
local row = bench.row_printer({-14, 9, 8, 9, 9, 5, 9, 9, 11, 11, 9, 9, -5})
row({"network", "budget", "of whole", "VBS pred", "VBS meas", "FBS b", "FBS pred", "FBS meas", "greedy pred",
     "greedy meas", "gain pred", "gain meas", "peaks"})
for _, name in ipairs(nets) do
  local s = bench_network(name, row)
  notes[#notes + 1] = string.format("%-15s %d layers; smallest VBS plan %s, whole batch %s; profile %s", name, s.layers,
    common.bytes(s.smallest), common.bytes(s.whole),
    s.cached and "cached" or ("measured in " .. common.seconds(s.profile_s)))
end
for _, n in ipairs(notes) do print(n) end
print("columns     time per sample, predicted by the planner from the cost table (pred) and measured (meas); FBS b: " ..
      "the fixed batch size; gain: VBS throughput over FBS (FBS time / VBS time - 1); peaks: every measured arena " ..
      "peak within the budget (ok) or not (OVER)")
print(string.format("done in %s", common.seconds(frugal.clock() - t0)))
