-- Per layer, dense against gated on the CPU executor at a stated activity (docs/BENCHMARKS.md, bench-gate):
--   ./build/frugal tools/gate-layers.lua NETS [ACTIVITY] [REPEATS] [EVERY]
-- NETS: zoo networks, comma-separated; ACTIVITY (default 0.5): frugal.gate's activity, and the executor's
-- gate_activity (gated convs timed with floor(A x K) kernels on, consumers with all but floor(A x C) input
-- channels zero); REPEATS (default 9): time_layer's timed runs per layer, batch 1; EVERY (default 1): gate
-- every EVERY-th gateable conv. Prints the layers that take more than 0.2 ms either way: dense time, gated
-- time, their ratio and both kernel paths; then the sums, and the sums over the layers that are neither gated nor
-- a gate's consumer (their time stays at every activity: a floor under the gated network's time ratio).
local nets = {}
for n in (arg[1] or "alexnet"):gmatch("[^,]+") do nets[#nets + 1] = n end
local act = tonumber(arg[2] or "0.5")
local reps = tonumber(arg[3] or "9")
local every = tonumber(arg[4] or "1")
for _, name in ipairs(nets) do
  local dense = frugal.zoo(name)
  local x = frugal.random_input(dense, 1, 0)
  local gated = frugal.gate(dense, {activity = act, seed = 0, input = x, every = every})
  local exd = frugal.executor(dense, {executor = "cpu"})
  local exg = frugal.executor(gated, {executor = "cpu", gate_activity = act})
  local dl, gl = exd:describe().layers, exg:describe().layers
  local byname = {}
  for i, l in ipairs(dl) do byname[l.name] = i end
  local td, tg = 0, 0
  local fd, fg = 0, 0
  print(string.format("%s activity %g: %d dense layers, %d gated", name, act, #dl, #gl))
  for i, l in ipairs(gl) do
    local j = byname[l.name]
    local a = j and exd:time_layer(j, 1, reps) or 0
    local b = exg:time_layer(i, 1, reps)
    td, tg = td + a, tg + b
    if not l.gate and not l.skips_off_channels then fd, fg = fd + a, fg + b end
    if a > 2e-4 or b > 2e-4 then
      print(string.format("  %-24s %9.3f ms %9.3f ms  %5.2f  %s | %s", l.name, a * 1e3, b * 1e3, b / math.max(a, 1e-9),
        tostring(j and dl[j].algorithm or "-"), tostring(l.algorithm)))
    end
  end
  print(string.format("  sum %9.3f ms %9.3f ms ratio %.3f", td * 1e3, tg * 1e3, tg / td))
  print(string.format("  neither gated nor skipping inputs %9.3f ms %9.3f ms (%.3f of the dense sum)", fd * 1e3, fg * 1e3, fd / td))
end
