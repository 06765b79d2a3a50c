-- CPU time of whole runs of a zoo network on the Vulkan executor (os.clock:
-- every thread of the process, lavapipe's included), and the fastest run's
-- own clock. On a shared machine CPU time moves less than wall time; a
-- hand-run, untimed comparison (docs/VULKAN.md), not part of CI:
--
--   ./build/frugal tools/vulkan-loads/run-cpu-time.lua NET [RUNS]
local net, n = arg[1], tonumber(arg[2] or 5)
local m = frugal.zoo(net)
local ex = frugal.executor(m, {executor = "vulkan"})
local x = frugal.random_input(m, 1, 0)
ex:run(x); ex:run(x)
local c0 = os.clock()
local best = 1e9
for i = 1, n do local _, rep = ex:run(x); if rep.seconds < best then best = rep.seconds end end
print(string.format("%-14s cpu/run %8.1f ms   min wall %8.1f ms", net, (os.clock() - c0) / n * 1000, best * 1000))
