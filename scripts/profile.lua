-- frugal profile: measure per-layer time and memory at batch sizes 1..N: the planner's cost table
-- usage: frugal profile MODEL.onnx | zoo:NAME [--upto 16] [--batches 1,2,4,8] [-o costs.json]
--                       [--no-cache] [--repeats R] [--threads T] [--executor cpu|vulkan] [--fit]
--   MODEL          an ONNX file or zoo:NAME (profile the folded model: frugal fold)
--   --upto N       the table covers batch sizes 1..N (default 16)
--   --batches L    measure only these batch sizes (comma-separated); the others get
--                  times interpolated linearly in per-batch time, marked "interpolated"
--   -o FILE        write the cost table as JSON (--output FILE also works)
--   --no-cache     measure again even if this model was measured before on this
--                  executor, device, threads and batch list (the new table
--                  replaces the cached one)
--   --repeats R    timed runs per layer and batch after a warm-up (default 5; the
--                  median is kept, max - min reported as the spread)
--   --fit          smooth the times: per layer, fit per-batch time = fixed + per-sample x b
--                  to the measured sizes and use the fit everywhere (source "fitted";
--                  the raw times stay in measured_time_s). Planning on a fitted table
--                  does not chase measurement noise (docs/COSTS.md)
-- Memory (in/out/workspace bytes) comes from the executor for every batch size.
-- Results are cached in $XDG_CACHE_HOME/frugal/costs (default ~/.cache/frugal/costs).
local argparse = require("argparse")
local common = require("cli_common")
local fmt = require("textfmt")

local usage = "frugal profile MODEL.onnx | zoo:NAME [--upto 16] [--batches 1,2,4,8] [-o costs.json] " ..
              "[--no-cache] [--repeats R] [--threads T] [--executor cpu|vulkan] [--fit]"
local a = argparse.parse(common.short_output(arg, "output"), {
  usage = usage,
  positional = {"model"},
  options = {upto = "integer", batches = "list", output = "string", no_cache = "flag", repeats = "integer",
             threads = "integer", executor = "string", fit = "flag"},
  defaults = {executor = "cpu", repeats = 5},
})
if a.upto and (a.upto < 1 or a.upto > 1024) then common.fail("--upto must be in 1..1024, got " .. a.upto, 2) end
if a.repeats < 1 then common.fail("--repeats must be >= 1, got " .. a.repeats, 2) end
if a.threads and a.threads < 1 then common.fail("--threads must be >= 1, got " .. a.threads, 2) end
for _, b in ipairs(a.batches or {}) do
  if b < 1 or b > 1024 then common.fail("--batches: batch size " .. b .. " is outside 1..1024", 2) end
end
local upto = a.upto or (a.batches and nil) or 16

local m = common.load_model(a.model)
local costs, info = common.try(frugal.profile, m, {
  executor = a.executor, threads = a.threads, upto = upto, batches = a.batches, repeats = a.repeats,
  cache = not a.no_cache, fit = a.fit})

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
print("batches     1.." .. B .. ", measured: " .. table.concat(measured, ",") ..
      (#info.measured_batches < B and " (the others interpolated)" or "") .. "; " .. costs.repeats ..
      " timed runs each, median kept")
print(fmt.table(rows, {"r", nil, "r", "r", "r", "r", "r", "r", "r"}, "  "))
print(string.format("network     %s per sample at batch 1, %s at batch %d (sum over layers)", common.seconds(total1),
      common.seconds(totalB), B))
if info.cached then
  print("source      cached: " .. info.cache_file .. " (--no-cache measures again)")
else
  print(string.format("source      measured in %s%s", common.seconds(info.seconds),
        info.cache_file and (", cached as " .. info.cache_file) or " (no cache folder)"))
end
if a.output then
  common.try(frugal.save_json, costs, a.output)
  print("wrote       " .. a.output)
end
