-- frugal workflow: the main job: fold, profile, plan under a budget, run the VBS and FBS plans and compare
-- Steps: 1. fold BatchNorm (BaN-OFF); 2. profile the folded model on the executor
-- (cached on disk); 3. plan the request with VBS and with fixed batch (FBS) under
-- the budget; 4. run both plans on the same random input inside an arena of exactly
-- the budget, and an ordinary whole-batch run of the ORIGINAL model as reference;
-- 5. print VBS against FBS: predicted and measured time per sample, predicted and
-- measured peak arena bytes, and whether the outputs agree with the reference.
-- Exits 1 when an output disagrees or a measured peak exceeds its prediction.
local argparse = require("argparse")
local common = require("cli_common")
local fmt = require("textfmt")
local summary = require("plan_summary")

local a = argparse.parse(arg, {
  arguments = {{"model", "an ONNX file or zoo:NAME (the default is a small residual + concat network, so the " ..
                "whole job takes seconds)", default = "zoo:toy_branched"}},
  options = {
    {"batch", "integer", "samples in the request", default = 12, min = 1, max = 1024},
    {"budget", "bytes", "memory for the request", min = 1,
     default_text = "among a few between the smallest plan and the whole batch's need, the one where VBS " ..
                    "gains most over fixed batch by the cost table; printed"},
    {"batches", "list", "batch sizes to measure (others are interpolated)", min = 1,
     default_text = "every one of 1..N, the only ones a request of N can use"},
    {"repeat", "integer", "timed runs of each plan, median kept", default = 5, min = 1},
    {"unit", "bytes", "the planner's memory unit", min = 1, default_text = "budget/256, rounded up"},
    {"executor", "string", "executor plugin: cpu, vulkan or one on FRUGAL_PLUGIN_PATH", default = "cpu"},
    {"threads", "integer", "the executor's threads", min = 1, default_text = "one per core"},
    {"no_cache", "flag", "profile again even if the cost table is cached"},
    {"report", "output", "write the figures as JSON", default_text = "not written"},
    {"save", "string", "write the input and both plans' outputs: PREFIX_input.npy, PREFIX_vbs.npy, " ..
     "PREFIX_fbs.npy (one-input, one-output models)", metavar = "PREFIX", default_text = "not written"},
    {"seed", "integer", "seed of the random input", default = 0, min = 0},
  },
  progress = true,
  notes = "Steps: 1 fold BatchNorm (BaN-OFF); 2 profile the folded model (cached on disk); 3 plan the request " ..
          "with VBS and fixed batch (FBS) under the budget; 4 run both plans in an arena of exactly the budget, " ..
          "and the unfolded model as reference; 5 compare predicted and measured time and peak memory, and the " ..
          "outputs. Exits 1 when an output disagrees or a measured peak exceeds its prediction.",
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
progress:stage("profiling")
local costs, info = common.try(frugal.profile, folded, {
  executor = a.executor, threads = a.threads, upto = B, batches = a.batches, cache = not a.no_cache,
  progress = not a.quiet})
local measured_note
if #info.measured_batches == B then
  measured_note = "batch sizes 1.." .. B .. " (only those a request of " .. B .. " can use)"
else
  local m = {}
  for _, b in ipairs(info.measured_batches) do m[#m + 1] = tostring(b) end
  measured_note = "batch sizes " .. table.concat(m, ",") .. " of 1.." .. B .. " (the others interpolated)"
end
print(string.format("2 profile   %d layers on %s (%s), %s: %s", #costs.layers, costs.executor, tostring(costs.device),
  measured_note, info.cached and ("cached in " .. info.cache_file) or ("measured in " .. common.seconds(info.seconds))))

-- 3. Plan.
local function plan(planner, budget)
  return frugal.plan(costs, {planner = planner, budget = budget, batch = B, unit = a.unit})
end
progress:stage("planning")
-- The whole batch's need: fixed batch B with no memory limit.
local whole_plan = common.try(plan, "fbs", 1 << 50)
local whole = whole_plan.peak_bytes
local budget, budget_note = a.budget, "given"
if not budget then
  -- Between the smallest plan and the whole batch's need, where VBS gains most
  -- over fixed batch (by the cost table), so that the comparison shows something.
  local smallest = common.try(plan, "vbs", whole).min_budget_bytes
  local best
  for _, f in ipairs({0.1, 0.2, 0.35, 0.5, 0.65, 0.8}) do
    local b = math.floor(smallest + f * (whole - smallest))
    local ok, p = pcall(plan, "vbs", b)
    if ok and p.gain_vs_fbs and (not best or p.gain_vs_fbs > best.gain + 1e-9) then best = {budget = b, gain = p.gain_vs_fbs} end
  end
  budget = best and best.budget or whole
  budget_note = string.format("chosen between the smallest plan (%s) and the whole batch's need (%s)",
    common.bytes(smallest), common.bytes(whole))
end
local ok, vbs = pcall(plan, "vbs", budget)
if not ok then common.fail(common.planner_message(vbs)) end
local fbs_ok, fbs = pcall(plan, "fbs", budget)
print(string.format("3 plan      %d samples under %s (%s); whole batch at once needs %s", B, common.bytes(budget),
  budget_note, common.bytes(whole)))

-- 4. Run: both plans in an arena of exactly the budget; the reference is the
-- unfolded model's ordinary whole-batch run (its own arena).
local x = common.try(frugal.random_input, original, B, a.seed)
progress:stage("running the reference (whole batch, unfolded model)")
local ref = common.try(frugal.run, original, nil, x, {executor = a.executor, threads = a.threads})
local ex = common.try(frugal.executor, folded, {executor = a.executor, threads = a.threads, budget = budget})

local function median(list)
  local s = {}
  for i, v in ipairs(list) do s[i] = v end
  table.sort(s)
  local n = #s
  return n % 2 == 1 and s[(n + 1) // 2] or 0.5 * (s[n // 2] + s[n // 2 + 1])
end

local runs = {{name = "VBS", plan = vbs}}
if fbs_ok then runs[2] = {name = "FBS", plan = fbs} end
for _, r in ipairs(runs) do r.times, r.peak = {}, 0 end
-- Alternate the plans so that a slow moment of the machine hits both alike.
progress:stage(string.format("running the plans, %d timed run%s each", a["repeat"], a["repeat"] == 1 and "" or "s"))
for i = 0, a["repeat"] do  -- i = 0: warm-up, not timed
  for _, r in ipairs(runs) do
    progress:status(string.format("running the %s plan (%d/%d)", r.name, i, a["repeat"]))
    local y, rep = common.try(ex.run, ex, x, {plan = r.plan})
    r.output = y
    r.peak = math.max(r.peak, rep.peak_bytes)
    if i > 0 then r.times[#r.times + 1] = rep.seconds end
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
if fbs_ok then
  local pv, pf = vbs.time_per_sample_s, fbs.time_per_sample_s
  rows[#rows + 1] = {"VBS gain", common.percent(1 - pv / pf), common.percent(1 - runs[1].measured / runs[2].measured),
                     "", "", ""}
end
print(string.format("4 run       %d timed run%s of each plan after a warm-up, median kept; reference: whole batch, unfolded model",
  a["repeat"], a["repeat"] == 1 and "" or "s"))
print("5 compare")
print(fmt.table(rows, {nil, "r", "r", "r", "r", "r"}, "  "))
if not fbs_ok then print("  FBS: no fixed-batch plan fits: " .. common.planner_message(fbs)) end
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
               profile = {cached = info.cached, cache_file = info.cache_file, measured_batches = info.measured_batches},
               vbs_plan = vbs, fbs_plan = fbs_ok and fbs or nil}
  for _, r in ipairs(runs) do
    rep[r.name:lower()] = {predicted_time_per_sample_s = r.plan.time_per_sample_s, measured_time_per_sample_s = r.measured,
                           predicted_peak_bytes = r.plan.peak_bytes, measured_peak_bytes = r.peak,
                           max_abs_diff = r.diff, tolerance = r.tol, agree = r.agree}
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
