-- frugal bench-costs: how well a measured cost table describes the runs it is used to plan
-- Two questions behind `frugal bench-vbs`'s predicted-vs-measured gaps:
--   1. Stability: profile the same network P times and compare the per-sample
--      time of every (layer, batch size) between profiles: the median and 90th
--      percentile of |t_k / t_1 - 1| over all entries, and the network's summed
--      per-sample time per batch size in each profile.
--   2. Prediction: run the whole network at each batch size (interleaved
--      rounds, medians) and compare the measured time per sample with the
--      tables' prediction (the sum over layers of time_s[b]), and with the sum
--      of the executor's own per-step times (so run overhead shows apart).
local argparse = require("argparse")
local common = require("cli_common")
local bench = require("bench_common")

local a = argparse.parse(arg, {
  options = {
    {"nets", "string", "zoo networks, BaN-OFF-folded as bench-vbs does", default = "squeezenet1_1,resnet18",
     metavar = "L"},
    {"batches", "list", "batch sizes to profile and to run", default = {1, 2, 4, 8, 12}, min = 1, max = 64},
    {"profiles", "integer", "independent profiles per network (never taken from the cache)", default = 2,
     min = 2, max = 10},
    {"repeat", "integer", "timed rounds of the whole-network runs; each round runs every batch size once",
     default = 5, min = 1},
    {"threads", "integer", "the CPU executor's threads", min = 1, default_text = "one per core"},
  },
  progress = true,
})
local progress = require("progress").new(a.quiet)
local batches = {}
for i, b in ipairs(a.batches) do batches[i] = b end
table.sort(batches)
local nets = bench.nets(a.nets)

local function quantile(list, q)
  local s = {}
  for i, v in ipairs(list) do s[i] = v end
  table.sort(s)
  if #s == 0 then return 0 end
  return s[math.max(1, math.ceil(q * #s))]
end

-- Sum over layers of the per-sample time at batch b: the table's prediction of
-- a whole-network run at batch b, per sample.
local function predicted_per_sample(costs, b)
  local t = 0
  for _, L in ipairs(costs.layers) do t = t + L.time_s[b] end
  return t
end

local function bench_network(name)
  progress:stage(name .. ": folding")
  local folded = common.try(frugal.fold, common.load_model("zoo:" .. name), {method = "banoff"})
  local tables = {}
  for k = 1, a.profiles do
    progress:status(string.format("%s: profile %d/%d", name, k, a.profiles))
    tables[k] = common.try(frugal.profile, folded, {executor = "cpu", threads = a.threads, upto = batches[#batches],
                                                     batches = batches, cache = false, progress = not a.quiet})
  end

  -- 1. Stability of per-(layer, batch) times between independent profiles.
  local deviations = {}
  local worst = {ratio = 1, layer = "", batch = 0}
  for k = 2, a.profiles do
    for i, L in ipairs(tables[1].layers) do
      for _, b in ipairs(batches) do
        local r = tables[k].layers[i].time_s[b] / L.time_s[b]
        deviations[#deviations + 1] = math.abs(r - 1)
        if math.abs(math.log(r)) > math.abs(math.log(worst.ratio)) then
          worst = {ratio = r, layer = L.name, batch = b}
        end
      end
    end
  end
  print(string.format("%-14s %d layers x %d batch sizes, %d profiles: |t_k/t_1 - 1| median %s, 90th percentile %s; " ..
    "worst %s at batch %d (x%.2f)", name, #tables[1].layers, #batches, a.profiles,
    common.percent(quantile(deviations, 0.5)), common.percent(quantile(deviations, 0.9)), worst.layer, worst.batch,
    worst.ratio))

  -- 2. Whole-network runs at each batch size against the tables' prediction.
  local x = common.try(frugal.random_input, folded, batches[#batches], 0)
  -- Every layer on the whole batch, the schedule the tables price (not the cache schedule).
  local ex = common.try(frugal.executor, folded, {executor = "cpu", threads = a.threads, schedule = "whole"})
  local variants = {}
  for _, b in ipairs(batches) do
    local xb = b == batches[#batches] and x or common.try(frugal.random_input, folded, b, 0)
    local v = {name = string.format("%s: batch %d", name, b), batch = b, step_sums = {}}
    v.run = function()
      local _, rep = common.try(ex.run, ex, xb)
      local sum = 0
      for _, s in ipairs(rep.steps) do sum = sum + s.seconds end
      v.step_sums[#v.step_sums + 1] = sum
      return rep.seconds
    end
    variants[#variants + 1] = v
  end
  bench.interleave(variants, a["repeat"], progress)
  progress:done()
  local row = bench.row_printer({-14, 6, 12, 12, 12, 12, 10, 9})
  row({"", "batch", "pred 1", "pred " .. a.profiles, "meas steps", "meas run", "meas/pred", "overhead"})
  for _, v in ipairs(variants) do
    local b = v.batch
    local p1, pk = predicted_per_sample(tables[1], b), predicted_per_sample(tables[a.profiles], b)
    -- The warm-up run recorded a step sum too: drop it.
    table.remove(v.step_sums, 1)
    local steps = bench.median(v.step_sums) / b
    local run = v.median / b
    row({"", tostring(b), common.seconds(p1), common.seconds(pk), common.seconds(steps), common.seconds(run),
         string.format("%.2f", run / p1), common.percent(run / steps - 1)})
  end
end

print(bench.machine_line())
print(string.format("cpu executor%s; BaN-OFF-folded networks; %d profiles (no cache) per network; whole-network " ..
  "runs: %d interleaved rounds, medians; times per sample", a.threads and (", " .. a.threads .. " threads") or "",
  a.profiles, a["repeat"]))
local t0 = frugal.clock()
for _, name in ipairs(nets) do bench_network(name) end
print("columns     pred k: sum over layers of profile k's per-sample time at that batch; meas steps: sum of the " ..
      "executor's per-step times in a whole-network run; meas run: the run's time; overhead: run over steps")
print(string.format("done in %s", common.seconds(frugal.clock() - t0)))
