-- frugal profile: measure per-layer time and memory at batch sizes 1..N: the planner's cost table
-- Memory (in/out/workspace bytes) comes from the executor for every batch size.
-- Results are cached in $XDG_CACHE_HOME/frugal/costs (default ~/.cache/frugal/costs).
local argparse = require("argparse")
local common = require("cli_common")
local fmt = require("textfmt")

local a = argparse.parse(arg, {
  arguments = {{"model", "an ONNX file or zoo:NAME (profile the folded model: frugal fold)"}},
  options = {
    {"upto", "integer", "the table covers batch sizes 1..N", min = 1, max = 1024,
     default_text = "16, or the largest of --batches"},
    {"batches", "list", "measure only these batch sizes; the others get times interpolated linearly in " ..
     "per-batch time, marked \"interpolated\"", min = 1, max = 1024, default_text = "every one of 1..N"},
    {"output", "output", "write the cost table as JSON (for frugal plan --costs)", short = "o",
     default_text = "not written"},
    {"no_cache", "flag", "measure again even if this model was measured before on this executor, device, " ..
     "threads and batch list (the new table replaces the cached one)"},
    {"repeat", "integer", "timed runs per layer and batch size, shared out over the passes (each after a " ..
     "warm-up); the median is kept, max - min reported as the spread", default = 5, min = 1},
    {"passes", "integer", "passes over the whole table, one after another; each entry keeps its fastest pass, " ..
     "so a slow stretch of the machine does not enter the table (docs/COSTS.md)", default = 3, min = 1, max = 100},
    {"executor", "string", "executor plugin: cpu, vulkan or one on FRUGAL_PLUGIN_PATH", default = "cpu"},
    {"threads", "integer", "the executor's threads", min = 1, default_text = "one per core"},
    {"fit", "flag", "smooth the times: per layer, fit per-batch time = fixed + per-sample x b to the measured " ..
     "(with --predict: and predicted) sizes and use the fit everywhere (source \"fitted\"; the raw times stay in measured_time_s), so plans " ..
     "do not chase measurement noise (docs/COSTS.md)"},
    {"predict", "input", "fill the table with the predictor trained in FILE (frugal predictor train): times " ..
     "marked \"predicted\", memory from the executor (exact); measures only --measure", default_text = "measure"},
    {"measure", "list", "with --predict: measure these batch sizes, predict the others", min = 1, max = 1024,
     default_text = "none"},
    {"gate_activity", "number", "time each gated conv with this fraction of its kernels on, and each consumer of " ..
     "a gate with this fraction of its input channels nonzero (docs/GATING.md); recorded in the table",
     min = 0, max = 1, default_text = "per layer, the activity measured on a calibration batch (8 random " ..
     "samples, seed 0)"},
  },
  progress = true,
})
local upto = a.upto or (a.batches and nil) or 16

local m = common.load_model(a.model)

-- Gated layers are timed at a stated activity: the option's, else what a
-- calibration batch gives per layer (a gated conv: its kernels on; a consumer:
-- its effective MACs over its dense MACs, the share of input channels it reads).
local function calibrated_activity()
  local ex <close> = common.try(frugal.executor, m, {executor = a.executor, threads = a.threads})
  local batch = ex:describe().batched == false and 1 or 8
  local _, report = common.try(ex.run, ex, common.try(frugal.random_input, m, batch, 0))
  local per_layer = {}
  for _, g in ipairs(report.gates or {}) do
    if g.gated then
      per_layer[g.layer] = g.activity
    elseif g.dense_macs > 0 then
      per_layer[g.layer] = g.effective_macs / g.dense_macs
    end
  end
  return next(per_layer) and per_layer or nil
end
local gate_activity = a.gate_activity
if gate_activity == nil and #m:gates().gates > 0 then gate_activity = calibrated_activity() end

if a.measure and math.max(table.unpack(a.measure)) > upto then
  common.fail(string.format("--measure: batch size %d is outside 1..%d (--upto)", math.max(table.unpack(a.measure)), upto), 2)
end
if a.measure and not a.predict then common.fail("--measure goes with --predict FILE", 2) end
if a.predict and a.batches then common.fail("--predict measures only --measure (not --batches)", 2) end

local function profile(batches, B)
  return common.try(frugal.profile, m, {
    executor = a.executor, threads = a.threads, upto = B, batches = batches, repeats = a["repeat"],
    passes = a.passes, cache = not a.no_cache, fit = a.fit, progress = not a.quiet, gate_activity = gate_activity})
end

-- --predict: measure --measure (if any), predict the rest; info as frugal.profile's.
local function predicted()
  local measured, minfo
  if a.measure then measured, minfo = profile(a.measure, math.max(table.unpack(a.measure))) end
  local costs, pinfo = common.try(frugal.predict, m, measured,
    {model = a.predict, upto = upto, executor = a.executor, threads = a.threads, fit = a.fit})
  for _, w in ipairs(pinfo.warnings) do io.stderr:write("frugal: " .. w .. "\n") end
  pinfo.measured_batches = a.measure or {}
  pinfo.cached = minfo and minfo.cached
  pinfo.cache_file = minfo and minfo.cache_file
  return costs, pinfo
end

local costs, info
if a.predict then costs, info = predicted() else costs, info = profile(a.batches, upto) end

local B = costs.batch_max
local rows = {{"#", "layer", "time/sample b=1", "b=" .. B, "spread b=1", "in b=1", "out b=1", "ws b=1", "ws b=" .. B}}
local total1, totalB = 0, 0
for i, l in ipairs(costs.layers) do
  total1 = total1 + l.time_s[1]
  totalB = totalB + l.time_s[B]
  local spread = l.time_spread_s and l.time_s[1] > 0 and (l.time_spread_s[1] / l.time_s[1]) or nil
  rows[#rows + 1] = {tostring(i), l.name, common.seconds(l.time_s[1]), common.seconds(l.time_s[B]),
                     spread and common.percent(spread) or "-", common.bytes(l.in_bytes[1]), common.bytes(l.out_bytes[1]),
                     common.bytes(l.ws_bytes[1]), common.bytes(l.ws_bytes[B])}
end
print("model       " .. m:origin() .. " ('" .. m:name() .. "'), " .. #costs.layers .. " layers on " .. costs.executor ..
      (costs.device and costs.device ~= "" and (" (" .. costs.device .. ")") or ""))
local measured = {}
for _, b in ipairs(info.measured_batches) do measured[#measured + 1] = tostring(b) end
if a.predict then
  print(string.format("batches     1..%d, measured: %s; %d entries predicted by %s in %s", B,
        #measured > 0 and table.concat(measured, ",") or "none", info.predicted, a.predict, common.seconds(info.seconds)))
else
  print("batches     1.." .. B .. ", measured: " .. table.concat(measured, ",") ..
        (#info.measured_batches < B and " (the others interpolated)" or "") .. "; " .. costs.repeats ..
        " timed runs each in " .. (costs.passes or 1) .. " passes, median of the fastest pass kept")
end
print(fmt.table(rows, {"r", nil, "r", "r", "r", "r", "r", "r", "r"}, "  "))
if type(costs.gate_activity) == "number" then
  print(string.format("gates       gated layers and their consumers timed at activity %g", costs.gate_activity))
elseif type(costs.gate_activity) == "table" then
  local parts = {}
  for _, l in ipairs(costs.layers) do
    local v = costs.gate_activity[l.name]
    if v then parts[#parts + 1] = string.format("%s %.2f", l.name, v) end
  end
  print("gates       timed at the activity of a calibration batch: " .. table.concat(parts, ", "))
end
print(string.format("network     %s per sample at batch 1, %s at batch %d (sum over layers)", common.seconds(total1),
      common.seconds(totalB), B))
if a.predict then
  if #info.measured_batches > 0 then
    print("source      measured " .. (info.cached and ("cached: " .. info.cache_file) or "now") .. ", the rest predicted")
  end
elseif info.cached then
  print("source      cached: " .. info.cache_file .. " (--no-cache measures again)")
else
  print(string.format("source      measured in %s%s", common.seconds(info.seconds),
        info.cache_file and (", cached as " .. info.cache_file) or " (no cache folder)"))
end
if a.output then
  common.try(frugal.save_json, costs, a.output)
  print("wrote       " .. a.output)
end
