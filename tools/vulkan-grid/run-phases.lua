-- Where a Vulkan run's time goes, per batch size and option: the run's wall time
-- around ex:run, the executor's own `seconds`, the GPU's stamped steps
-- (`gpu_seconds`) and the host's parts (`host_seconds`: record, submit, gate
-- counts). A hand-run measurement for GPUs (docs/GATING.md, the H200 runs).
--   ./build/frugal tools/vulkan-grid/run-phases.lua MODEL.onnx|zoo:NAME [BATCHES] [RUNS]
-- BATCHES: comma-separated (default 1,2,4,8); RUNS: timed runs after 2 untimed
-- (default 10), medians. Batch 1 is also run with every gate on
-- (gate_threshold 0), every gate off (1) and winograd off.
-- Environment variables of the executor (FRUGAL_VULKAN_MIN_GROUPS) apply as usual.
local path = arg[1]
if not path then
  io.stderr:write("usage: frugal run-phases.lua MODEL.onnx|zoo:NAME [BATCHES] [RUNS]\n")
  os.exit(2)
end
local m = path:match("^zoo:") and frugal.zoo(path:sub(5)) or frugal.load(path)
local batches = {}
for b in (arg[2] or "1,2,4,8"):gmatch("[^,]+") do batches[#batches + 1] = math.tointeger(tonumber(b)) end
local runs = math.tointeger(tonumber(arg[3] or "10"))

local function median(t)
  table.sort(t)
  return t[#t // 2 + 1]
end

local function measure(label, opts, batch)
  opts.executor = "vulkan"
  local ex <close> = frugal.executor(m, opts)
  local x = frugal.random_input(m, batch, 1)
  local wall, own, gpu, submit, record, counts = {}, {}, {}, {}, {}, {}
  for i = 1, runs + 2 do
    local t0 = frugal.clock()
    local _, r = ex:run(x)
    if i > 2 then
      local h = r.host_seconds or {}
      wall[#wall + 1] = frugal.clock() - t0
      own[#own + 1] = r.seconds
      gpu[#gpu + 1] = r.gpu_seconds or 0
      submit[#submit + 1], record[#record + 1], counts[#counts + 1] = h.submit or 0, h.record or 0, h.gate_counts or 0
    end
  end
  print(string.format("%-28s %5d %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f", label, batch, median(wall) * 1e3,
    median(own) * 1e3, median(gpu) * 1e3, median(record) * 1e3, median(submit) * 1e3, median(counts) * 1e3))
end

print(string.format("%-28s %5s %9s %9s %9s %9s %9s %9s", "case", "batch", "wall ms", "own ms", "gpu ms",
  "record", "submit", "counts"))
for _, b in ipairs(batches) do measure("default", {}, b) end
local gated = false
for _, l in ipairs(frugal.executor(m, {executor = "vulkan"}):describe().layers) do
  gated = gated or l.gate ~= nil
end
if gated then
  measure("gate_threshold=0 (all on)", {gate_threshold = 0}, batches[1])
  measure("gate_threshold=1 (all off)", {gate_threshold = 1}, batches[1])
end
measure("winograd=off", {winograd = "off"}, batches[1])
