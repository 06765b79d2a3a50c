-- frugal bench-gate: gated against dense networks on one executor: time ratio beside MAC ratio per activity
-- Per network and activity: the dense zoo network and the same network with
-- LKAM gates (frugal gate, calibrated on the timed input itself, so that the
-- activity is the one asked), both on one executor (--executor) in this one process,
-- timed in interleaved rounds (each round runs dense, then every gated
-- variant; medians of the executor's own clock). MAC ratio: the gated
-- network's multiply-accumulates as run (gates included, from the run
-- report) over the dense network's; time ratio: gated over dense median.
-- docs/GATING.md and docs/BENCHMARKS.md give the targets and the tables.
local argparse = require("argparse")
local common = require("cli_common")
local bench = require("bench_common")

local a = argparse.parse(arg, {
  options = {
    {"nets", "string", "zoo networks, comma-separated", default = "alexnet,squeezenet1_1,resnet18", metavar = "L"},
    {"activities", "string", "fractions of kernels on, comma-separated; \"paper\": the paper's CaffeNet profile " ..
     "(64.27% on, every other gateable conv gated)", default = "1,0.75,0.5,0.25,0.1,paper", metavar = "L"},
    {"batch", "integer", "samples per run (also the calibration batch)", default = 1, min = 1, max = 256},
    {"repeat", "integer", "timed rounds after a warm-up round; medians", default = 5, min = 1},
    {"executor", "string", "executor plugin that runs both (cpu, vulkan)", default = "cpu"},
    {"threads", "integer", "the CPU executor's threads", min = 1, default_text = "one per core"},
    {"seed", "integer", "seed of the input and of the gates' weights", default = 0, min = 0},
  },
  progress = true,
  json = "print the rows as one JSON object",
})
local progress = require("progress").new(a.quiet)
local nets = bench.nets(a.nets)
local activities = {}
for item in a.activities:gmatch("[^,]+") do
  local v = tonumber(item)
  if item == "paper" then
    activities[#activities + 1] = {label = "paper", activity = common.PAPER_GATES.activity, every = common.PAPER_GATES.every}
  elseif not v or v < 0 or v > 1 then
    common.fail("--activities: '" .. item .. "' is not a number in [0, 1] nor \"paper\"", 2)
  else
    activities[#activities + 1] = {label = string.format("%g", v), activity = v, every = 1}
  end
end

local function total_macs(ex, batch)
  local t = 0
  for _, l in ipairs(ex:describe().layers) do t = t + l.macs_per_sample end
  return t * batch
end

-- MACs of a gated run: every layer's dense count, less what the gated layers skipped.
local function run_macs(ex, report, batch)
  local t = total_macs(ex, batch)
  for _, g in ipairs(report.gates or {}) do t = t - (g.dense_macs - g.effective_macs) end
  return t
end

local rows = {}
local device  -- the executor's device, from the first executor's description
local row = bench.row_printer({-14, 8, 6, 8, 10, 11, 9, 9, 9, 7})
local function bench_network(name)
  progress:stage(name .. ": gating")
  local dense = common.load_model("zoo:" .. name)
  local x = common.try(frugal.random_input, dense, a.batch, a.seed)
  local variants = {{name = name .. ": dense", model = dense}}
  for _, act in ipairs(activities) do
    local gated, rep = common.try(frugal.gate, dense, {activity = act.activity, every = act.every, seed = a.seed,
                                                       input = x})
    variants[#variants + 1] = {name = name .. ": activity " .. act.label, model = gated, activity = act.activity,
                               label = act.label, gates = #rep.gated}
  end
  for _, v in ipairs(variants) do
    v.ex = common.try(frugal.executor, v.model, {executor = a.executor, threads = a.threads})
    v.run = function()
      local y, rep = common.try(v.ex.run, v.ex, x)
      v.output, v.report = y, rep
      return rep.seconds
    end
  end
  device = device or variants[1].ex:describe().device
  bench.interleave(variants, a["repeat"], progress)
  progress:done()
  local d = variants[1]
  local dense_macs = total_macs(d.ex, a.batch)
  for k = 2, #variants do
    local v = variants[k]
    local on, all = 0, 0
    for _, g in ipairs(v.report.gates or {}) do
      if g.gated then on, all = on + g.kernels_on, all + g.kernels end
    end
    -- The ratio per round, then their median: on a machine whose speed drifts over a
    -- benchmark, a round's dense and gated runs are seconds apart, the medians minutes.
    local ratios = {}
    for i, t in ipairs(v.times) do ratios[i] = t / d.times[i] end
    local r = {net = name, activity = v.activity, variant = v.label, gated_layers = v.gates, measured_activity = all > 0 and on / all or 1,
               dense_seconds = d.median, gated_seconds = v.median, mac_ratio = run_macs(v.ex, v.report, a.batch) / dense_macs,
               time_ratio = bench.median(ratios)}
    rows[#rows + 1] = r
    if not a.json then
      row({name, r.variant, tostring(r.gated_layers), string.format("%.1f%%", 100 * r.measured_activity),
           common.seconds(r.dense_seconds), common.seconds(r.gated_seconds), string.format("%.3f", r.mac_ratio),
           string.format("%.3f", r.time_ratio), string.format("%.2f", r.time_ratio / r.mac_ratio),
           r.time_ratio <= (r.activity == 1 and 1.05 or 1.15 * r.mac_ratio) and "yes" or "no"})
    end
  end
end

if not a.json then
  print(bench.machine_line())
  print(string.format("runs        batch %d, %s executor%s; %d timed rounds after a warm-up, each round running " ..
    "dense then every gated variant; medians of the executor's clock, the time ratio the median of the " ..
    "rounds' gated / dense", a.batch, a.executor,
    a.threads and (", " .. a.threads .. " threads") or "", a["repeat"]))
  row({"network", "activity", "gates", "kernels on", "dense", "gated", "MAC ratio", "time ratio", "time/MAC", "target"})
end
for _, name in ipairs(nets) do bench_network(name) end
if not a.json and device then print("device      " .. device) end
if a.json then
  print(frugal.json_encode({machine = bench.machine_line(), executor = a.executor, device = device, batch = a.batch,
                            rows = rows}, 1))
  return
end
print("columns     gates: gated convs; kernels on: measured over the timed input; MAC ratio: gated network's MACs " ..
      "as run (gates included) / dense; time ratio: median over the rounds of gated / dense; target: activity 1 time ratio <= 1.05, " ..
      "otherwise time ratio <= 1.15 x MAC ratio")
