-- Per-layer times of a zoo network on the Vulkan executor: time_layer's median
-- (wall) and the process's CPU time per call (os.clock, every thread), batch
-- 1; "all" for every layer (then only the total). Untimed, hand-run:
--
--   ./build/frugal tools/vulkan-loads/layer-cpu-time.lua NET REPS LAYER... | all
local net, reps = arg[1], tonumber(arg[2])
local m = frugal.zoo(net)
local opts = {executor = "vulkan"}
local ex = frugal.executor(m, opts)
local idx = {}
for i, L in ipairs(ex:describe().layers) do idx[L.name] = i end
local names = {}
for k = 3, #arg do names[#names + 1] = arg[k] end
if names[1] == "all" then
  names = {}
  for _, L in ipairs(ex:describe().layers) do names[#names + 1] = L.name end
end
local tw, tc = 0, 0
for _, n in ipairs(names) do
  local i = idx[n]
  ex:time_layer(i, 1, 1)
  local c0 = os.clock()
  local t = ex:time_layer(i, 1, reps)
  local c = (os.clock() - c0) / reps
  tw, tc = tw + t, tc + c
  if #names < 40 then print(string.format("%-28s wall %8.2f ms  cpu %8.2f ms", n, t * 1000, c * 1000)) end
end
print(string.format("%-28s wall %8.2f ms  cpu %8.2f ms", "total", tw * 1000, tc * 1000))
