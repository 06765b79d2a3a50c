-- frugal bench-vbs: variable batch size (VBS) against fixed batch (FBS) and greedy over a sweep of memory budgets
-- The VBS paper's Figure 7 / Table II in form: per network and budget, the time
-- per sample of each plan as the planner predicts it (from the cost table) and
-- as measured by running the plan on the executor (CPU by default) inside an arena of
-- exactly the budget, and VBS's throughput gain over FBS (FBS time / VBS time
-- - 1), predicted and measured. Each network is folded (BaN-OFF) and profiled
-- once for batch sizes 1..N (cached on disk, as frugal workflow does); plans
-- use the fitted tables unless --raw (docs/PLANNER.md says why).
local argparse = require("argparse")
local common = require("cli_common")
local bench = require("bench_common")
local timing = require("plan_timing")

-- The two with large fully connected layers (batching them pays on a CPU), then the VBS paper's Table II set.
local DEFAULT_NETS = "alexnet,vgg16_bn,googlenet,resnet50,squeezenet1_1,mobilenet_v2,resnet18"
local a = argparse.parse(arg, {
  options = {
    {"nets", "string", "zoo networks, comma-separated, or \"all\" (the zoo builds them at 224x224)",
     default = DEFAULT_NETS, metavar = "L"},
    {"batch", "integer", "samples in the request", default = 12, min = 1, max = 64},
    {"budgets", "integer", "budgets per network, evenly spaced from just above the smallest VBS plan to the " ..
     "whole batch's need (fixed batch N, no limit)", default = 6, min = 1, max = 50},
    {"repeat", "integer", "timed rounds; each visits every budget in turn and runs its VBS, FBS and greedy " ..
     "plans once (after an untimed run in the budget's fresh arena). One warm-up run per network",
     default = 5, min = 1},
    {"stat", "string", "which round a plan's measured time is: fastest (the statistic the profile keeps per " ..
     "entry, docs/COSTS.md \"Passes\") or median", default = "fastest", metavar = "S"},
    {"executor", "string", "executor plugin that profiles and runs the plans: cpu, vulkan or one on " ..
     "FRUGAL_PLUGIN_PATH", default = "cpu"},
    {"device", "integer", "the Vulkan executor's device index (frugal devices)", min = 0, default_text = "the first"},
    {"threads", "integer", "the CPU executor's threads", min = 1, default_text = "one per core"},
    {"time_layer", "string", "the CPU executor's caches when it times a layer for the profile: cold (output and " ..
     "workspace flushed), cold_inputs (inputs too) or warm (docs/COSTS.md)", default_text = "cold"},
    {"no_cache", "flag", "profile again even if the cost table is cached"},
    {"raw", "flag", "plan on the raw measured tables, not the fitted ones (per layer, per-batch time = fixed + " ..
     "per-sample x b)"},
    {"min_gain", "number", "take a VBS plan that differs from the faster of fixed batch and greedy only when it is " ..
     "predicted at least this fraction faster (docs/PLANNER.md, \"Minimum gain\")", default = 0.03, min = 0, max = 0.99},
    {"explain", "flag", "after each budget's row, per plan: steps, kernel calls, bytes moved, and predicted " ..
     "against measured time of its worst layers"},
    {"json", "output", "write every row (network, budget, planner, predicted and measured time per sample, " ..
     "peaks, per-layer times) to FILE (frugal plot bench-vbs draws it)", default_text = "not written"},
  },
  progress = true,
})
local progress = require("progress").new(a.quiet)
local nets = bench.nets(a.nets)
local B = a.batch
local PLANNERS = {"vbs", "fbs", "greedy"}
if a.stat ~= "fastest" and a.stat ~= "median" then
  common.fail(string.format("--stat: expected fastest or median, got %q", a.stat))
end
local results = {}  -- one entry per (network, budget, planner), for --json and the checks

local function gain(t_fbs, t_vbs)
  if not t_fbs or not t_vbs then return "-" end
  return common.percent(t_fbs / t_vbs - 1)
end

-- The options that pick and configure the executor, merged into `extra`.
local function executor_options(extra)
  local o = {executor = a.executor, threads = a.threads, device = a.device, time_layer = a.time_layer}
  for k, v in pairs(extra or {}) do o[k] = v end
  return o
end

-- Folded, profiled (fitted unless --raw), with the budget range and an executor warmed up.
local function prepare(name)
  progress:stage(name .. ": folding")
  local folded = common.try(frugal.fold, common.load_model("zoo:" .. name), {method = "banoff"})
  local costs, info = common.try(frugal.profile, folded, executor_options({upto = B, cache = not a.no_cache,
                                                                            fit = not a.raw, progress = not a.quiet}))
  local ok, whole_plan = pcall(frugal.plan, costs, {planner = "fbs", budget = 1 << 50, batch = B})
  if not ok then common.fail(name .. ": " .. common.message(whole_plan)) end
  local ok2, any = pcall(frugal.plan, costs, {planner = "vbs", budget = whole_plan.peak_bytes, batch = B})
  if not ok2 then common.fail(name .. ": " .. common.message(any)) end
  local net = {name = name, folded = folded, costs = costs, info = info, whole = whole_plan.peak_bytes,
               smallest = any.min_budget_bytes}
  net.ex = common.try(frugal.executor, folded, executor_options({budget = net.whole}))
  net.x = common.try(frugal.random_input, folded, B, 0)
  progress:status(name .. ": warm-up")
  common.try(net.ex.run, net.ex, net.x)
  return net
end

-- A plan's steps as one string (every field of every step), to find identical plans.
local function steps_key(plan)
  local parts = {}
  for _, st in ipairs(plan.steps) do
    local keys = {}
    for k in pairs(st) do keys[#keys + 1] = k end
    table.sort(keys)
    for _, k in ipairs(keys) do parts[#parts + 1] = k .. "=" .. tostring(st[k]) end
    parts[#parts + 1] = ";"
  end
  return table.concat(parts, ",")
end

-- The three plans at `budget` (not run yet): {plans = planner -> plan or {error}, variants = runnable ones}.
local function plan_budget(net, budget, label)
  local plans, variants = {}, {}
  for _, p in ipairs(PLANNERS) do
    -- With the executor that runs them: the arena moves are priced (docs/COSTS.md, "Moves").
    local okp, pl = pcall(frugal.plan, net.costs, {planner = p, budget = budget, batch = B, executor = net.ex,
                                                   min_gain = a.min_gain})
    plans[p] = okp and pl or {error = common.message(pl)}
    if okp then
      local v = {name = label .. ", " .. p, planner = p, plan = pl, peak = 0, layers = {}, times = {}}
      v.run = function()
        local _, rep = common.try(net.ex.run, net.ex, net.x, {plan = pl})
        v.peak = math.max(v.peak, rep.peak_bytes)
        return rep
      end
      -- A plan identical to an earlier planner's (greedy's often is VBS's) is
      -- run once and its times shared: the same plan measured twice differs
      -- only by the machine's noise, which is no difference between planners.
      for _, w in ipairs(variants) do
        if not v.same_as and steps_key(w.plan) == steps_key(pl) then v.same_as = w end
      end
      variants[#variants + 1] = v
    end
  end
  return {budget = budget, plans = plans, variants = variants}
end

-- Every budget's plans, `repeat` rounds; a round visits the budgets in turn and
-- runs their plans once each in an arena of exactly the budget (after one
-- untimed run: set_budget gives a fresh block, whose first run pays its page
-- faults). The rounds of one budget are thus spread over the whole network's
-- measurement, so a slow stretch of the machine (seconds long; docs/BENCHMARKS.md)
-- does not take all of them. Kept: the fastest round (the profile keeps the fastest
-- of its passes per entry, so both describe the machine in the same state) or the median (--stat).
local function measure_rounds(net, cells)
  for r = 1, a["repeat"] do
    for k, c in ipairs(cells) do
      if #c.variants > 0 then
        common.try(net.ex.set_budget, net.ex, c.budget)
        c.variants[1].run()
        for _, v in ipairs(c.variants) do
          if not v.same_as then
            progress:status(string.format("%s (round %d/%d, budget %d/%d)", v.name, r, a["repeat"], k, #cells))
            local rep = v.run()
            v.times[#v.times + 1] = rep.seconds
            v.layers[#v.layers + 1] = timing.measured_by_layer(rep)
          end
        end
      end
    end
  end
  for _, c in ipairs(cells) do
    for _, v in ipairs(c.variants) do
      if v.same_as then v.times, v.layers, v.peak = v.same_as.times, v.same_as.layers, v.same_as.peak end
      v.median, v.fastest, v.fastest_round = bench.median(v.times), math.huge, 1
      for i, t in ipairs(v.times) do
        if t < v.fastest then v.fastest, v.fastest_round = t, i end
      end
      v.seconds = a.stat == "fastest" and v.fastest or v.median
    end
  end
  progress:done()
end

local function record(net, budget, plans, variants)
  local measured = {}
  for _, v in ipairs(variants) do
    measured[v.planner] = v.seconds / B
    -- Per layer: the fastest round's own steps (one run, so the layers add up to it), or medians.
    v.by_layer = a.stat == "fastest" and timing.median_by_layer({v.layers[v.fastest_round]})
                 or timing.median_by_layer(v.layers)
  end
  for _, p in ipairs(PLANNERS) do
    local r = {network = net.name, budget_bytes = budget, budget_of_whole = budget / net.whole, planner = p,
               error = plans[p].error}
    for _, v in ipairs(variants) do
      if v.planner == p then
        local rows = timing.layer_rows(v.plan, net.costs, v.by_layer, B)
        r.predicted_s_per_sample, r.measured_s_per_sample = v.plan.time_per_sample_s, measured[p]
        r.fastest_s_per_sample, r.median_s_per_sample = v.fastest / B, v.median / B
        r.predicted_peak_bytes, r.peak_bytes, r.steps = v.plan.peak_bytes, v.peak, #v.plan.steps
        r.calls, r.moved_bytes, r.fbs_batch, r.layers = v.by_layer.calls, v.by_layer.moved, v.plan.fbs_batch, rows
      end
    end
    results[#results + 1] = r
  end
  return measured
end

local function explain(net, variants)
  for _, v in ipairs(variants) do
    local m = v.by_layer
    local mv = v.plan.moves or {}
    local priced = mv.priced and string.format(" taking %s per sample (placed %s, priced %s per sample)",
      common.seconds((m.move_seconds or 0) / B), common.bytes(mv.moved_bytes), common.seconds(mv.seconds / B)) or ""
    print(string.format("%16s%-6s %3d steps, %d calls, moved %s%s; pred %s, meas %s per sample%s", "", v.planner,
      m.steps, m.calls, common.bytes(m.moved), priced, common.seconds(v.plan.time_per_sample_s),
      common.seconds(v.seconds / B),
      timing.disagreement(v.plan.time_per_sample_s, v.seconds / B) and "  (beyond 15%)" or ""))
    print(string.format("%24srounds: fastest %s, median %s, slowest %s per sample", "", common.seconds(v.fastest / B),
      common.seconds(v.median / B), common.seconds(math.max(table.unpack(v.times)) / B)))
    if v.same_as then print(string.format("%24sthe same plan as %s's: run once, its times shared", "", v.same_as.planner)) end
    for _, line in ipairs(timing.explain_lines(v.plan, net.costs, m, B, 4)) do print(string.rep(" ", 24) .. line) end
  end
end

local function bench_network(name, row)
  local net = prepare(name)
  local cells = {}
  for k = 1, a.budgets do
    -- Evenly from 2% above the smallest plan (the memory unit rounds needs up) to the whole batch's need.
    local f = a.budgets == 1 and 1 or (k - 1) / (a.budgets - 1)
    local budget = math.floor(net.smallest * 1.02 + f * (net.whole - net.smallest * 1.02))
    cells[k] = plan_budget(net, budget, string.format("%s: budget %d/%d", name, k, a.budgets))
  end
  measure_rounds(net, cells)
  for k, c in ipairs(cells) do
    local budget, plans, variants = c.budget, c.plans, c.variants
    local measured = record(net, budget, plans, variants)
    local over = false
    for _, v in ipairs(variants) do over = over or v.peak > budget end
    local function cell_pred(p) return plans[p].time_per_sample_s and common.seconds(plans[p].time_per_sample_s) or "-" end
    local function cell_meas(p) return measured[p] and common.seconds(measured[p]) or "-" end
    row({
      k == 1 and name or "", common.bytes(budget), common.percent(budget / net.whole),
      cell_pred("vbs"), cell_meas("vbs"),
      plans.fbs.fbs_batch and tostring(plans.fbs.fbs_batch) or "-", cell_pred("fbs"), cell_meas("fbs"),
      cell_pred("greedy"), cell_meas("greedy"),
      gain(plans.fbs.time_per_sample_s, plans.vbs.time_per_sample_s), gain(measured.fbs, measured.vbs),
      over and "OVER" or "ok"})
    if a.explain then explain(net, variants) end
  end
  return net
end

-- Per network: the worst measured VBS time against the better baseline and
-- against FBS, and the plans whose prediction missed by more than 15%.
local function print_checks()
  local by_net, order = {}, {}
  for _, r in ipairs(results) do
    if not by_net[r.network] then by_net[r.network] = {}; order[#order + 1] = r.network end
    local t = by_net[r.network]
    t[r.budget_bytes] = t[r.budget_bytes] or {}
    t[r.budget_bytes][r.planner] = r
  end
  for _, name in ipairs(order) do
    local worst_best, worst_fbs, missed, plans, missed_other = 0, 0, {}, 0, 0
    local other = a.stat == "fastest" and "median" or "fastest"
    for _, row in pairs(by_net[name]) do
      local v, f, g = row.vbs, row.fbs, row.greedy
      local vm, fm, gm = v.measured_s_per_sample, f.measured_s_per_sample, g.measured_s_per_sample
      local best = fm and gm and math.min(fm, gm) or fm or gm
      if vm and best then worst_best = math.max(worst_best, vm / best) end
      if vm and fm then worst_fbs = math.max(worst_fbs, vm / fm) end
      for _, r in pairs(row) do
        if r.measured_s_per_sample then
          plans = plans + 1
          if timing.disagreement(r.predicted_s_per_sample, r[other .. "_s_per_sample"]) then
            missed_other = missed_other + 1
          end
          if timing.disagreement(r.predicted_s_per_sample, r.measured_s_per_sample) then
            missed[#missed + 1] = string.format("%s %s (x%.2f)", common.bytes(r.budget_bytes), r.planner,
              r.measured_s_per_sample / r.predicted_s_per_sample)
          end
        end
      end
    end
    print(string.format("%-15s VBS / better of FBS, greedy: worst x%.3f; VBS / FBS: worst x%.3f; %d of %d plans " ..
      "within 15%% of their prediction%s (%s round; %s: %d of %d)", name, worst_best, worst_fbs, plans - #missed, plans,
      #missed > 0 and (" (not: " .. table.concat(missed, ", ") .. ")") or "", a.stat, other, plans - missed_other, plans))
  end
end

local machine = bench.machine_line()
print(machine)
if a.executor == "vulkan" then
  -- The device the plans run on: its name is what a GPU table is read by.
  local info = frugal.devices().vulkan
  for _, d in ipairs(info.devices or {}) do
    if d.index == (a.device or 0) then
      print(string.format("device      %d: %s (%s, driver %s, Vulkan %s)", d.index, d.name, d.type, d.driver, d.api_version))
    end
  end
end
print(string.format("request     %d samples; %s executor%s; BaN-OFF-folded networks; %d timed round%s over all budgets " ..
  "(VBS, FBS, greedy in turn), the %s round kept; %s cost tables", B, a.executor,
  a.threads and (", " .. a.threads .. " threads") or a.device and (", device " .. a.device) or "",
  a["repeat"], a["repeat"] == 1 and "" or "s", a.stat, a.raw and "raw (--raw)" or "fitted"))
if a.time_layer then print("profile     layers timed with time_layer = " .. a.time_layer .. " (docs/COSTS.md)") end
local t0 = frugal.clock()
local notes = {}
local row = bench.row_printer({-14, 9, 8, 9, 9, 5, 9, 9, 11, 11, 9, 9, -5})
row({"network", "budget", "of whole", "VBS pred", "VBS meas", "FBS b", "FBS pred", "FBS meas", "greedy pred",
     "greedy meas", "gain pred", "gain meas", "peaks"})
for _, name in ipairs(nets) do
  local s = bench_network(name, row)
  notes[#notes + 1] = string.format("%-15s %d layers; smallest VBS plan %s, whole batch %s; profile %s", name,
    #s.costs.layers, common.bytes(s.smallest), common.bytes(s.whole),
    s.info.cached and "cached" or ("measured in " .. common.seconds(s.info.seconds)))
  s.ex, s.folded, s.x = nil, nil, nil
  collectgarbage()  -- the executor's arena (hundreds of MB for vgg16_bn) goes before the next network
end
for _, n in ipairs(notes) do print(n) end
print("columns     time per sample, predicted by the planner from the cost table (pred) and measured (meas); FBS b: " ..
      "the fixed batch size; gain: VBS throughput over FBS (FBS time / VBS time - 1); peaks: every measured arena " ..
      "peak within the budget (ok) or not (OVER)")
print_checks()
print(string.format("done in %s", common.seconds(frugal.clock() - t0)))
if a.json then
  common.try(frugal.save_json, {machine = machine, batch = B, ["repeat"] = a["repeat"], fitted = not a.raw,
                                rows = results}, a.json)
  print("wrote " .. a.json)
end
