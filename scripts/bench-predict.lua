-- frugal bench-predict: the per-layer time predictor against measurements (perf4sight's protocol)
-- (a) a random split of the basis's (layer, batch) points; (b) leave networks
-- out: trained on the basis, tested on networks it never saw; (c) unseen
-- pruning levels of the basis. Per network: MAPE and the share of (layer,
-- batch) points within +-10%, and the network latency (sum of predicted layer
-- times and step overheads) against a measured whole run, beside the same sum
-- over the measured table ("lat.meas": what per-layer times cannot explain), and the
-- predicted table's network sums against the measured table's ("vs.table": the
-- predictor's own share, free of the runs' noise). Then the time to predict a table
-- against profiling it, and plans made from predicted tables run against plans
-- made from measured ones. Every network is folded (BaN-OFF) and profiled once
-- (cached), as frugal workflow and frugal predictor train do.
local argparse = require("argparse")
local basis = require("predictor_basis")
local bench = require("bench_common")
local common = require("cli_common")
local ev = require("predict_eval")

local a = argparse.parse(arg, {
  options = {
    {"basis", "string", "training networks (as frugal predictor train's --nets)",
     default = "resnet18,mobilenet_v2,squeezenet1_1,mobilenet_v2_silu,gemm_ladder"},
    {"unseen", "string", "networks left out of training (b)",
     default = "resnet50,googlenet,efficientnet_b0,alexnet,vgg16_bn,mobilenet_v1"},
    {"batches", "list", "batch sizes measured and predicted", min = 1, max = 64, default_text = "1,2,4,8"},
    {"pruning", "list", "pruning levels of the basis in training (percent)", min = 0, max = 95,
     default_text = "0,30,50,70,90"},
    {"test_pruning", "list", "pruning levels tested in (c)", min = 0, max = 95, default_text = "10,20,40,60,80"},
    {"modes", "string", "models to evaluate: forest, boosted or both", default = "forest,boosted"},
    {"plan_nets", "string", "networks whose plans from predicted and measured tables are run (\"none\": skip)",
     default = "resnet50,mobilenet_v1,googlenet"},
    {"plan_batch", "integer", "samples in the planned request", default = 8, min = 1, max = 64},
    {"min_gain", "number", "the plans' minimum gain for more steps than fixed batch or greedy (as frugal workflow)",
     default = 0.03, min = 0, max = 0.99},
    {"runs", "integer", "timed whole runs (latency) and plan runs, median kept", default = 3, min = 1},
    {"repeat", "integer", "timed runs per layer and batch size when profiling", default = 5, min = 1},
    {"threads", "integer", "the CPU executor's threads", min = 1, default_text = "one per core"},
    {"no_cache", "flag", "profile again even where a profile is cached"},
    {"keep", "string", "keep the trained predictor files with this prefix", default_text = "a scratch folder"},
  },
  progress = true,
})
local progress = require("progress").new(a.quiet)
local batches = a.batches or {1, 2, 4, 8}
local B = math.max(table.unpack(batches))
local popts = {executor = "cpu", threads = a.threads, repeats = a["repeat"], cache = not a.no_cache}
local prefix = a.keep or os.tmpname()  -- the trained files: PREFIX_<set>_<mode>.json
local trained = {}

local function profile(nets, levels) return basis.profile_all(basis.names(nets), levels, batches, popts, progress) end

local function train(profiled, mode, tag)
  local file = prefix .. "_" .. tag .. "_" .. mode .. ".json"
  progress:stage(string.format("training %s (%s)", tag, mode))
  common.try(frugal.train_predictor, profiled, {output = file, mode = mode})
  trained[#trained + 1] = file
  return file
end

local function predicted(p, file, upto)
  return (common.try(frugal.predict, p.model, nil, {model = file, upto = upto or B, threads = a.threads}))
end

-- Seconds of a whole run of b samples (median of --runs after a warm-up), every
-- layer on the whole batch as the prediction sums them (not the cache schedule).
local function whole_run(p, b)
  local ex <close> = common.try(frugal.executor, p.model, {executor = "cpu", threads = a.threads, schedule = "whole"})
  local x = common.try(frugal.random_input, p.model, b, 0)
  local v = {{name = p.label, run = function() local _, r = common.try(ex.run, ex, x); return r.seconds end}}
  bench.interleave(v, a.runs, progress, {})
  return v[1].median
end

-- One row per network: errors of the predicted per-layer times and of the network latency.
local printer = bench.row_printer({-4, -22, 7, 8, 10, 10, 10, 10})
local function header()
  printer({"exp", "network", "points", "MAPE", "within10", "latency", "lat.meas", "vs.table"})
end

-- Relative errors of the predicted table's network sums against the measured table's, per batch size.
local function table_errors(measured, predicted)
  local errs = {}
  for _, b in ipairs(batches) do
    local m = ev.network_seconds(measured, b)
    errs[#errs + 1] = math.abs(ev.network_seconds(predicted, b) - m) / m
  end
  return errs
end

local function latency_errors(p, costs, runs)
  local errs = {}
  for _, b in ipairs(batches) do
    runs[p.label .. "@" .. b] = runs[p.label .. "@" .. b] or whole_run(p, b)
    local m = runs[p.label .. "@" .. b]
    errs[#errs + 1] = math.abs(ev.network_seconds(costs, b) - m) / m
  end
  return errs
end

-- lat: latency errors of the predicted tables; floor: those of the measured
-- tables, the part of the error no per-layer prediction can remove; tab: the
-- predicted against the measured tables' network sums.
local function row(exp, name, errs, lat, floor, tab)
  local s, l, f, t = ev.summary(errs), ev.summary(lat or {}), ev.summary(floor or {}), ev.summary(tab or {})
  if not s then
    printer({exp, name, "0", "-", "-", "-", "-", "-"})
    return {mape = math.huge}
  end
  local function pct(x) return x and common.percent(x.mape) or "-" end
  printer({exp, name, tostring(s.n), common.percent(s.mape), common.percent(s.within10), pct(l), pct(f), pct(t)})
  return s
end

-- (a) random split: 20% of each basis table's measured points held out.
local function random_split(profiled, mode)
  local train_tables, tests = ev.split((function()
    local t = {}
    for i, p in ipairs(profiled) do t[i] = p.costs end
    return t
  end)(), 0.2, ev.random(1))
  local examples = {}
  for i, p in ipairs(profiled) do examples[i] = {model = p.model, costs = train_tables[i]} end
  local file = train(examples, mode, "split")
  local all = {}
  for i, p in ipairs(profiled) do
    local e = ev.errors(p.costs, predicted(p, file), function(l, b) return tests[i][l][b] end)
    ev.append(all, e)
  end
  return row("(a)", "basis, random 20%", all)
end

-- (b) and (c): every profile of `set` against the predictor `file`, one row per network;
-- kinds, when given, gathers the points per kind of layer (predict_eval.add_by_kind).
local function per_network(exp, set, file, runs, kinds)
  local by_net, lat, floor, tab, order = {}, {}, {}, {}, {}
  local all, all_lat, all_floor, all_tab = {}, {}, {}, {}
  for _, p in ipairs(set) do
    local ok, costs = pcall(frugal.predict, p.model, nil, {model = file, upto = B, threads = a.threads})
    if not ok then
      print(string.format("%-4s  %-22s  refused: %s", exp, p.label, common.message(costs)))
    else
      if not by_net[p.network] then
        by_net[p.network], lat[p.network], floor[p.network], tab[p.network] = {}, {}, {}, {}
        order[#order + 1] = p.network
      end
      ev.append(by_net[p.network], ev.errors(p.costs, costs))
      if kinds then ev.add_by_kind(kinds, p.costs, costs) end
      ev.append(lat[p.network], latency_errors(p, costs, runs))
      ev.append(floor[p.network], latency_errors(p, p.costs, runs))
      ev.append(tab[p.network], table_errors(p.costs, costs))
    end
  end
  for _, n in ipairs(order) do
    row(exp, n, by_net[n], lat[n], floor[n], tab[n])
    ev.append(all, by_net[n])
    ev.append(all_lat, lat[n])
    ev.append(all_floor, floor[n])
    ev.append(all_tab, tab[n])
  end
  return row(exp, "all", all, all_lat, all_floor, all_tab)
end

-- Which kinds of layer carry the error: one row per kind, those with the most
-- points outside +-10% first; bias is the median of predicted / measured - 1,
-- time and |err| the kind's shares of the measured batch seconds and of the
-- absolute error in seconds over all points.
local function kind_rows(exp, kinds)
  local list, meas, err = {}, 0, 0
  for k, e in pairs(kinds) do
    local abs = {}
    for i, x in ipairs(e.signed) do abs[i] = math.abs(x) end
    local s = ev.summary(abs)
    list[#list + 1] = {kind = k, s = s, out = s.n - math.floor(s.within10 * s.n + 0.5), e = e}
    meas, err = meas + e.meas_s, err + e.err_s
  end
  table.sort(list, function(x, y) return x.out > y.out or (x.out == y.out and x.kind < y.kind) end)
  local kp = bench.row_printer({-4, -52, 7, 8, 10, 8, 7, 7})
  kp({exp, "kind of layer", "points", "MAPE", "within10", "bias", "time", "|err|"})
  for _, r in ipairs(list) do
    kp({exp, r.kind, tostring(r.s.n), common.percent(r.s.mape), common.percent(r.s.within10),
        string.format("%+.1f%%", 100 * bench.median(r.e.signed)), common.percent(r.e.meas_s / meas),
        common.percent(r.e.err_s / err)})
  end
end

-- Time of a predicted table of resnet50 for batch 1..16 against profiling its measured batch sizes.
local function predict_time(file, unseen)
  for _, p in ipairs(unseen) do
    if p.network == "resnet50" then
      local _, info = common.try(frugal.predict, p.model, nil, {model = file, upto = 16, threads = a.threads})
      print(string.format("speed       resnet50: a predicted table for batch 1..16 in %s; profiling batch sizes " ..
        "%s took %s%s", common.seconds(info.seconds), table.concat(batches, ","), common.seconds(p.costs.profile_seconds),
        p.cached and " (when it was cached)" or ""))
    end
  end
end

-- VBS plans at a budget half-way between the smallest plan and the whole batch, from both tables, run in turn.
-- Planned as frugal workflow plans: fitted tables, arena moves priced by the executor, --min-gain.
local function plan_pair(p, file)
  local n = a.plan_batch
  local measured = common.try(frugal.profile, p.model, {executor = "cpu", threads = a.threads, upto = n,
    batches = batches, repeats = a["repeat"], cache = not a.no_cache, fit = true, progress = false})
  local pred = common.try(frugal.predict, p.model, nil, {model = file, upto = n, threads = a.threads, fit = true})
  local whole = common.try(frugal.plan, measured, {planner = "fbs", budget = 1 << 50, batch = n}).peak_bytes
  local smallest = common.try(frugal.plan, measured, {planner = "vbs", budget = whole, batch = n}).min_budget_bytes
  local budget = math.floor((smallest + whole) / 2)
  local ex <close> = common.try(frugal.executor, p.model, {executor = "cpu", threads = a.threads, budget = budget})
  local x = common.try(frugal.random_input, p.model, n, 0)
  local v = {}
  for _, t in ipairs({{"measured", measured}, {"predicted", pred}}) do
    local plan = common.try(frugal.plan, t[2], {planner = "vbs", budget = budget, batch = n, executor = ex,
                                                min_gain = a.min_gain})
    v[#v + 1] = {name = t[1], plan = plan,
                 run = function() local _, r = common.try(ex.run, ex, x, {plan = plan}); return r.seconds end}
  end
  bench.interleave(v, a.runs, progress, {})
  local function priced(x) return string.format("priced %s, %d steps", common.seconds(x.plan.time_per_sample_s), #x.plan.steps) end
  print(string.format("plans       %-16s budget %s: VBS from the measured table %s per sample (%s), from the " ..
    "predicted %s (%s): %+.1f%%", p.network, common.bytes(budget), common.seconds(v[1].median / n), priced(v[1]),
    common.seconds(v[2].median / n), priced(v[2]), 100 * (v[2].median / v[1].median - 1)))
end

local pruning = a.pruning or {0, 30, 50, 70, 90}
local base = profile(a.basis, pruning)
local unseen = profile(a.unseen, {0})
local levels = profile(a.basis, a.test_pruning or {10, 20, 40, 60, 80})
progress:done()
print(bench.machine_line())
print(string.format("setup       basis %s at pruning %s%%; batch sizes %s; %d timed whole runs per latency", a.basis,
  table.concat(pruning, ","), table.concat(batches, ","), a.runs))
local runs, best = {}, nil
for _, mode in ipairs(basis.names(a.modes)) do
  print("\nmode        " .. mode)
  header()
  random_split(base, mode)
  local file = train(base, mode, "basis")
  local kinds = {}
  local b = per_network("(b)", unseen, file, runs, kinds)
  per_network("(c)", levels, file, runs)
  print("")
  kind_rows("(b)", kinds)
  progress:done()
  if not best or b.mape < best.mape then best = {mape = b.mape, file = file, mode = mode} end
end
print("")
predict_time(best.file, unseen)
if a.plan_nets ~= "none" then
  for _, name in ipairs(basis.names(a.plan_nets)) do
    for _, p in ipairs(unseen) do
      if p.network == name then plan_pair(p, best.file) end
    end
  end
  print("            (plans from the " .. best.mode .. " predictor, the better in (b))")
end
if not a.keep then
  os.remove(prefix)
  for _, f in ipairs(trained) do os.remove(f) end
end
