-- Per-layer time_layer medians of a zoo network on two Vulkan executors that
-- differ in one option (A and B, created side by side, each layer timed on A
-- then on B), batch 1; layers under 1.5 ms on both are summed but not listed.
-- Hand-run on an idle machine:
--
--   ./build/frugal tools/vulkan-loads/layer-ab.lua NET REPS OPTION A B
--   ./build/frugal tools/vulkan-loads/layer-ab.lua resnet18 5 conv_texel on off
local net, reps, key, va, vb = arg[1], tonumber(arg[2]), arg[3], arg[4], arg[5]
if not (net and reps and key and va and vb) then
  error("usage: layer-ab.lua NET REPS OPTION A B (e.g. resnet18 5 conv_texel on off)")
end
local m = frugal.zoo(net)
local a = frugal.executor(m, {executor = "vulkan", [key] = va})
local b = frugal.executor(m, {executor = "vulkan", [key] = vb})
print(string.format("%s, batch 1, time_layer median of %d: %s = %s (A) against %s (B)", net, reps, key, va, vb))
local ta, tb = 0, 0
for i, L in ipairs(a:describe().layers) do
  local x, y = a:time_layer(i, 1, reps), b:time_layer(i, 1, reps)
  ta, tb = ta + x, tb + y
  if x > 0.0015 or y > 0.0015 then
    print(string.format("%-28s A %8.2f  B %8.2f ms  A/B %5.2f", L.name, x * 1e3, y * 1e3, x / y))
  end
end
print(string.format("%-28s A %8.2f  B %8.2f ms  A/B %5.2f", "total", ta * 1e3, tb * 1e3, ta / tb))
