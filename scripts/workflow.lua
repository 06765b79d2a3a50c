-- frugal workflow: the main job: fold, profile, plan under a budget, run the VBS, FBS and greedy plans and compare
-- Steps: 1. fold BatchNorm (BaN-OFF); 2. profile the folded model on the executor
-- (cached on disk; times fitted per layer unless --raw, docs/COSTS.md); 3. plan
-- the request with VBS, fixed batch (FBS) and greedy VBS under the budget; 4. run
-- the plans on the same random input inside an arena of exactly the budget, in
-- turn, and an ordinary whole-batch run of the ORIGINAL model as reference; 5.
-- print the plans side by side: predicted and measured time per sample, predicted
-- and measured peak arena bytes, whether the outputs agree with the reference,
-- and a line for each plan whose measured time is more than 15% off its
-- prediction, naming the layer most off. Exits 1 when an output disagrees or a
-- measured peak exceeds its prediction.
local argparse = require("argparse")
local common = require("cli_common")
local fmt = require("textfmt")
local summary = require("plan_summary")
local timing = require("plan_timing")

local a = argparse.parse(arg, {
  arguments = {{"model", "an ONNX file or zoo:NAME (the default, AlexNet, has large early activations and large " ..
                "fully connected layers at the end: under a tight budget VBS runs those at the whole request, " ..
                "fixed batch cannot)", default = "zoo:alexnet"}},
  options = {
    {"batch", "integer", "samples in the request", default = 12, min = 1, max = 1024},
    {"budget", "bytes", "memory for the request", min = 1,
     default_text = "among a few between the smallest plan and the whole batch's need, the one where VBS " ..
                    "gains most over the better of fixed batch and greedy by the cost table (preferring " ..
                    "budgets where both have a plan); printed"},
    {"batches", "list", "batch sizes to measure (others are interpolated, or predicted with --predict)", min = 1,
     default_text = "every one of 1..N, the only ones a request of N can use"},
    {"repeat", "integer", "timed runs of each plan, median kept", default = 5, min = 1},
    {"unit", "bytes", "the planner's memory unit", min = 1, default_text = "budget/256, rounded up"},
    {"executor", "string", "executor plugin: cpu, vulkan or one on FRUGAL_PLUGIN_PATH", default = "cpu"},
    {"threads", "integer", "the executor's threads", min = 1, default_text = "one per core"},
    {"no_cache", "flag", "profile again even if the cost table is cached"},
    {"raw", "flag", "plan on the raw measured (or predicted) times, not the fitted ones (per layer, per-batch " ..
     "time = fixed + per-sample x b; docs/PLANNER.md says why fitted is the default)"},
    {"min_gain", "number", "take a VBS plan that differs from the faster of fixed batch and greedy only when it is " ..
     "predicted at least this fraction faster (docs/PLANNER.md, \"Minimum gain\")", default = 0.03, min = 0, max = 0.99},
    {"predict", "input", "plan from a table the predictor in FILE fills (frugal predictor train) instead of " ..
     "profiling: it measures only --batches; memory stays exact", default_text = "profile"},
    {"report", "output", "write the figures as JSON", default_text = "not written"},
    {"save", "string", "write the input and the plans' outputs: PREFIX_input.npy, PREFIX_vbs.npy, " ..
     "PREFIX_fbs.npy, PREFIX_greedy.npy (one-input, one-output models)", metavar = "PREFIX",
     default_text = "not written"},
    {"seed", "integer", "seed of the random input", default = 0, min = 0},
  },
  progress = true,
  notes = "Steps: 1 fold BatchNorm (BaN-OFF); 2 profile the folded model (cached on disk; times fitted unless " ..
          "--raw); 3 plan the request with VBS, fixed batch (FBS) and greedy VBS under the budget; 4 run the " ..
          "plans in an arena of exactly the budget, and the unfolded model as reference; 5 compare predicted and " ..
          "measured time and peak memory, and the outputs; a plan measured more than 15% off its prediction gets " ..
          "a line naming the layer most off. Exits 1 when an output disagrees or a measured peak exceeds its " ..
          "prediction.",
})
local progress = require("progress").new(a.quiet)
for _, b in ipairs(a.batches or {}) do
  if b > a.batch then
    common.fail("--batches: batch size " .. b .. " is outside 1.." .. a.batch .. " (a request of " .. a.batch ..
                " samples runs no larger batch)", 2)
  end
end
if a.save then common.check_writable(a.save .. "_input.npy", "--save") end
local B = a.batch
local t_start = frugal.clock()

-- 1. Fold.
progress:stage("loading " .. a.model)
local original = common.load_model(a.model)
progress:stage("folding BatchNorm (BaN-OFF)")
local folded, fold_report = common.try(frugal.fold, original, {method = "banoff"})
print(string.format("1 fold      %s: BaN-OFF folded %d of %d BatchNorm node%s (%s -> %s parameters)", common.model_label(a),
  fold_report.bn_folded, fold_report.bn_total, fold_report.bn_total == 1 and "" or "s",
  fmt.commas(original:parameter_count()), fmt.commas(folded:parameter_count())))

-- 2. Profile: batch sizes 1..B only, since a request of B samples never runs more at once.
progress:stage(a.predict and "predicting" or "profiling")
local costs, info
if a.predict then
  -- --batches: measure those (as profile --measure), predict the rest; fitted unless --raw.
  local measured
  if a.batches then
    measured = common.try(frugal.profile, folded, {executor = a.executor, threads = a.threads,
      upto = math.max(table.unpack(a.batches)), batches = a.batches, cache = not a.no_cache, progress = not a.quiet})
  end
  costs, info = common.try(frugal.predict, folded, measured,
    {model = a.predict, upto = B, executor = a.executor, threads = a.threads, fit = not a.raw})
  info.measured_batches = a.batches or {}
  for _, w in ipairs(info.warnings) do io.stderr:write("frugal: " .. w .. "\n") end
end
if not a.predict then
  costs, info = common.try(frugal.profile, folded, {
    executor = a.executor, threads = a.threads, upto = B, batches = a.batches, cache = not a.no_cache,
    fit = not a.raw, progress = not a.quiet})
end
local measured_note
if a.predict then
  local m = {}
  for _, b in ipairs(info.measured_batches) do m[#m + 1] = tostring(b) end
  print(string.format("2 predict   %d layers on %s (%s): batch sizes 1..%d, %s measured, the others predicted by " ..
    "%s in %s; %s", #costs.layers, costs.executor, tostring(costs.device), B, #m > 0 and table.concat(m, ",") or "none",
    a.predict, common.seconds(info.seconds),
    a.raw and "raw times (--raw)" or "times fitted per layer (fixed + per-sample x batch)"))
elseif #info.measured_batches == B then
  measured_note = "batch sizes 1.." .. B .. " (only those a request of " .. B .. " can use)"
else
  local m = {}
  for _, b in ipairs(info.measured_batches) do m[#m + 1] = tostring(b) end
  measured_note = "batch sizes " .. table.concat(m, ",") .. " of 1.." .. B .. " (the others interpolated)"
end
if not a.predict then
  print(string.format("2 profile   %d layers on %s (%s), %s: %s; %s", #costs.layers, costs.executor,
    tostring(costs.device), measured_note,
    info.cached and ("cached in " .. info.cache_file) or ("measured in " .. common.seconds(info.seconds)),
    a.raw and "raw times (--raw)" or "times fitted per layer (fixed + per-sample x batch)"))
end

-- 3. Plan, with the executor that will run the plans: it places each
-- candidate, and the arena moves it would make are priced (docs/COSTS.md, "Moves").
local ex = common.try(frugal.executor, folded, {executor = a.executor, threads = a.threads})
local function plan(planner, budget)
  return frugal.plan(costs, {planner = planner, budget = budget, batch = B, unit = a.unit, executor = ex,
                             min_gain = a.min_gain})
end
progress:stage("planning")
-- The whole batch's need: fixed batch B with no memory limit.
local whole_plan = common.try(plan, "fbs", 1 << 50)
local whole = whole_plan.peak_bytes
local budget, budget_note = a.budget, "given"
if not budget then
  -- Between the smallest plan and the whole batch's need, where VBS gains most
  -- (by the cost table), so that the comparison shows something.
  -- Budgets where greedy has a plan too come first (all three are compared),
  -- and among them the largest predicted gain over the better baseline.
  local smallest = common.try(plan, "vbs", whole).min_budget_bytes
  local best
  for _, f in ipairs({0.1, 0.2, 0.35, 0.5, 0.65, 0.8}) do
    local b = math.floor(smallest + f * (whole - smallest))
    local ok, p = pcall(plan, "vbs", b)
    if ok and p.time_per_sample_s then
      local base, all = math.huge, true
      for _, other in ipairs({"fbs", "greedy"}) do
        local ok2, q = pcall(plan, other, b)
        if ok2 and q.time_per_sample_s then base = math.min(base, q.time_per_sample_s) else all = false end
      end
      local c = {budget = b, all = all, gain = base / p.time_per_sample_s - 1}
      if base < math.huge and (not best or (c.all and not best.all) or
                               (c.all == best.all and c.gain > best.gain + 1e-9)) then
        best = c
      end
    end
  end
  budget = best and best.budget or whole
  budget_note = string.format("chosen between the smallest plan (%s) and the whole batch's need (%s) where VBS " ..
    "gains most over the better of FBS and greedy by the cost table",
    common.bytes(smallest), common.bytes(whole))
end
local ok, vbs = pcall(plan, "vbs", budget)
if not ok then common.fail(common.planner_message(vbs)) end
local fbs_ok, fbs = pcall(plan, "fbs", budget)
local greedy_ok, greedy = pcall(plan, "greedy", budget)
print(string.format("3 plan      %d samples under %s (%s); whole batch at once needs %s", B, common.bytes(budget),
  budget_note, common.bytes(whole)))

-- 4. Run: both plans in an arena of exactly the budget; the reference is the
-- unfolded model's ordinary whole-batch run (its own arena).
local x = common.try(frugal.random_input, original, B, a.seed)
progress:stage("running the reference (whole batch, unfolded model)")
local ref = common.try(frugal.run, original, nil, x, {executor = a.executor, threads = a.threads,
                                                       schedule = a.executor == "cpu" and "whole" or nil})
common.try(ex.set_budget, ex, budget)

local function median(list)
  local s = {}
  for i, v in ipairs(list) do s[i] = v end
  table.sort(s)
  local n = #s
  return n % 2 == 1 and s[(n + 1) // 2] or 0.5 * (s[n // 2] + s[n // 2 + 1])
end

local runs = {{name = "VBS", plan = vbs}}
if fbs_ok then runs[#runs + 1] = {name = "FBS", plan = fbs} end
if greedy_ok then runs[#runs + 1] = {name = "greedy", plan = greedy} end
for _, r in ipairs(runs) do r.times, r.peak, r.layers = {}, 0, {} end
-- Alternate the plans so that a slow moment of the machine hits both alike.
progress:stage(string.format("running the plans, %d timed run%s each", a["repeat"], a["repeat"] == 1 and "" or "s"))
for i = 0, a["repeat"] do  -- i = 0: warm-up, not timed
  for _, r in ipairs(runs) do
    progress:status(string.format("running the %s plan (%d/%d)", r.name, i, a["repeat"]))
    local y, rep = common.try(ex.run, ex, x, {plan = r.plan})
    r.output = y
    r.peak = math.max(r.peak, rep.peak_bytes)
    if i > 0 then
      r.times[#r.times + 1] = rep.seconds
      r.layers[#r.layers + 1] = timing.measured_by_layer(rep)
    end
  end
end
progress:done()

-- 5. Compare.
local function agreement(y)
  local pairs_ = {}
  if type(y) == "table" then
    for name, t in pairs(y) do pairs_[#pairs_ + 1] = {t, ref[name]} end
  else
    pairs_[1] = {y, ref}
  end
  local diff, ok, tol = 0, true, 0
  for _, p in ipairs(pairs_) do
    local r = p[2]
    local max_ref = math.max(math.abs(r:max()), math.abs(r:min()))
    local d = p[1]:max_abs_diff(r)
    local t = 1e-4 * math.max(1, max_ref)  -- float32 rounding after folding and re-ordering
    diff, tol = math.max(diff, d), math.max(tol, t)
    ok = ok and d <= t
  end
  return diff, ok, tol
end
local failed = false
local rows = {{"", "time/sample", "", "peak arena", "", "outputs vs reference"},
              {"", "predicted", "measured", "predicted", "measured", "max |diff|"}}
for _, r in ipairs(runs) do
  r.measured = median(r.times) / B
  r.diff, r.agree, r.tol = agreement(r.output)
  if not r.agree then failed = true end
  if r.peak > r.plan.peak_bytes then failed = true end
  local label = r.name .. (r.name == "FBS" and (" (batch " .. r.plan.fbs_batch .. ")") or "")
  rows[#rows + 1] = {label, common.seconds(r.plan.time_per_sample_s), common.seconds(r.measured),
                     common.bytes(r.plan.peak_bytes), common.bytes(r.peak),
                     string.format("%.2g (%s)", r.diff, r.agree and "agree" or "DIFFER")}
end
-- VBS's throughput gain over a baseline (its time / VBS time - 1), predicted and measured.
for _, r in ipairs(runs) do
  if r.name ~= "VBS" then
    rows[#rows + 1] = {"VBS gain over " .. r.name, common.percent(r.plan.time_per_sample_s / vbs.time_per_sample_s - 1),
                       common.percent(r.measured / runs[1].measured - 1), "", "", ""}
  end
end
print(string.format("4 run       %d timed run%s of each plan after a warm-up, median kept; reference: whole batch, unfolded model",
  a["repeat"], a["repeat"] == 1 and "" or "s"))
print("5 compare")
print(fmt.table(rows, {nil, "r", "r", "r", "r", "r"}, "  "))
if not fbs_ok then print("  FBS: no fixed-batch plan fits: " .. common.planner_message(fbs)) end
if not greedy_ok then print("  greedy: no plan fits: " .. common.planner_message(greedy)) end
-- A plan whose measured time is more than 15% off the prediction: one line, naming the layer most off.
for _, r in ipairs(runs) do
  local off = timing.disagreement(r.plan.time_per_sample_s, r.measured)
  if off then
    local worst = timing.layer_rows(r.plan, costs, timing.median_by_layer(r.layers), B)[1]
    print(string.format("  %s: %s per sample; most off: layer '%s', predicted %s, measured %s per sample " ..
      "(frugal bench-vbs --explain shows more)", r.name, off, worst.name, common.seconds(worst.pred),
      common.seconds(worst.meas)))
  end
end
for _, r in ipairs(runs) do
  if r.peak ~= r.plan.peak_bytes then
    print(string.format("  %s: measured peak %s %s the predicted %s", r.name, common.bytes(r.peak),
      r.peak > r.plan.peak_bytes and "EXCEEDS" or "is below", common.bytes(r.plan.peak_bytes)))
  end
end
print()
summary.print(vbs)
print(string.format("\ndone in %s", common.seconds(frugal.clock() - t_start)))

if a.report then
  local rep = {model = a.model, batch = B, budget_bytes = budget, whole_batch_bytes = whole,
               fold = {bn_total = fold_report.bn_total, bn_folded = fold_report.bn_folded},
               profile = {cached = info.cached, cache_file = info.cache_file, measured_batches = info.measured_batches,
                          predicted_by = a.predict},
               fitted = not a.raw, vbs_plan = vbs, fbs_plan = fbs_ok and fbs or nil,
               greedy_plan = greedy_ok and greedy or nil}
  for _, r in ipairs(runs) do
    rep[r.name:lower()] = {predicted_time_per_sample_s = r.plan.time_per_sample_s, measured_time_per_sample_s = r.measured,
                           predicted_peak_bytes = r.plan.peak_bytes, measured_peak_bytes = r.peak,
                           max_abs_diff = r.diff, tolerance = r.tol, agree = r.agree,
                           disagreement = timing.disagreement(r.plan.time_per_sample_s, r.measured)}
  end
  common.try(frugal.save_json, rep, a.report)
  print("wrote " .. a.report)
end
if a.save then
  local function save(t, suffix)
    if type(t) ~= "userdata" then common.fail("--save needs a model with one input and one output") end
    common.try(t.save_npy, t, a.save .. "_" .. suffix .. ".npy")
  end
  save(x, "input")
  for _, r in ipairs(runs) do save(r.output, r.name:lower()) end
end
if failed then common.fail("the check failed: see the table above") end
