-- Per-layer time of a zoo network on the Vulkan executor with fp32 and with
-- fp16 weights (option weight_storage), each layer timed on both executors one
-- after the other (time_layer medians), so slow drifts of a shared machine
-- touch both alike. A hand-run measurement behind docs/VULKAN.md, "fp16
-- weights"; not CI:
--
--   ./build/frugal tools/fp16/fp16-layers.lua [NET] [BATCH] [REPEATS] [ROWS]
--
-- Prints the ROWS slowest layers (by their fp32 time) and the sums over all layers.
local net, batch = arg[1] or "resnet18", tonumber(arg[2] or 1)
local reps, rows = tonumber(arg[3] or 5), tonumber(arg[4] or 8)
local m <close> = frugal.zoo(net)
local ex32 <close> = frugal.executor(m, {executor = "vulkan"})
local ex16 <close> = frugal.executor(m, {executor = "vulkan", weight_storage = "fp16"})
local layers, sum32, sum16 = {}, 0, 0
for i, L in ipairs(ex32:describe().layers) do
  local a, b = ex32:time_layer(i, batch, reps), ex16:time_layer(i, batch, reps)
  layers[#layers + 1] = {name = L.name, a = a, b = b}
  sum32, sum16 = sum32 + a, sum16 + b
end
table.sort(layers, function(x, y) return x.a > y.a end)
print(string.format("%s, batch %d, median of %d; ms per call", net, batch, reps))
print(string.format("%-28s %9s %9s %7s", "layer", "fp32", "fp16", "16/32"))
for k = 1, math.min(rows, #layers) do
  local L = layers[k]
  print(string.format("%-28s %9.2f %9.2f %7.3f", L.name, L.a * 1e3, L.b * 1e3, L.b / L.a))
end
print(string.format("%-28s %9.2f %9.2f %7.3f", "sum of " .. #layers .. " layers", sum32 * 1e3, sum16 * 1e3,
  sum16 / sum32))
