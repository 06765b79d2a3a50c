-- Per-layer time of the 3x3 stride-1 convs of a zoo network on the Vulkan
-- executor with Winograd off, F(2x2, 3x3) and F(4x4, 3x3) (executor option
-- "winograd"), and what "auto" picks: the measurement behind the choice in
-- plugins/vulkan/kernels/conv.cpp (docs/VULKAN.md, "Winograd"). A hand-run
-- measurement, not part of CI:
--
--   ./build/frugal tools/winograd/winograd-layers.lua [NET] [BATCH] [REPEATS]
--
-- Times are time_layer's medians (milliseconds per call of BATCH samples).
local net, batch, reps = arg[1] or "resnet18", tonumber(arg[2] or 1), tonumber(arg[3] or 3)
local m = frugal.zoo(net)
local modes = {"off", "f23", "f43", "auto"}
local exs = {}
for _, w in ipairs(modes) do exs[w] = frugal.executor(m, {executor = "vulkan", winograd = w}) end
local total = {}
print(string.format("%s, batch %d, median of %d; ms per call", net, batch, reps))
print(string.format("%-24s %8s %8s %8s %8s  %s", "layer", "off", "f23", "f43", "auto", "auto picks (workspace)"))
for i, L in ipairs(exs.off:describe().layers) do
  if exs.f23:layer_bytes(i, batch).ws_bytes > 0 then  -- a Winograd-eligible conv
    local line = string.format("%-24s", L.name)
    for _, w in ipairs(modes) do
      local t = exs[w]:time_layer(i, batch, reps)
      total[w] = (total[w] or 0) + t
      line = line .. string.format(" %8.1f", t * 1000)
    end
    local ws = exs.auto:layer_bytes(i, batch).ws_bytes
    local pick = ws == 0 and "direct"
      or (ws == exs.f23:layer_bytes(i, batch).ws_bytes and "F(2x2)" or "F(4x4)")
    print(line .. string.format("  %s (%.2f MB)", pick, ws / 1e6))
  end
end
print(string.format("%-24s %8.1f %8.1f %8.1f %8.1f", "sum", total.off * 1000, total.f23 * 1000,
  total.f43 * 1000, total.auto * 1000))
