-- How far fp16 weights (the Vulkan executor's option weight_storage = "fp16")
-- move a zoo network's outputs: the Vulkan executor with fp32 and with fp16
-- weights against the CPU executor (fp32, which agrees with the float64
-- reference to about 1e-6 of the output's scale: test_vulkan_cpu_agreement).
-- A hand-run measurement behind docs/VULKAN.md, "fp16 weights"; not CI.
--
--   ./build/frugal tools/fp16/fp16-accuracy.lua [NETS] [BATCH] [SEED]
--
-- The zoo's weights are its deterministic random ones (frugal.zoo), the
-- inputs uniform in [-1, 1). Errors are relative to the output's largest
-- magnitude (the bound test_vulkan_cpu_agreement uses: a logit near zero is a
-- sum of terms that cancel), top-1 the samples whose arg max agrees with the CPU's;
-- weights MB: the Vulkan executor's weights buffer (describe's weights_bytes) with each.
local nets = arg[1] or "squeezenet1_1,mobilenet_v2,resnet18"
local batch, seed = tonumber(arg[2] or 8), tonumber(arg[3] or 0)

local function scale(y) return math.max(y:max(), -y:min()) end
local function first(y) return frugal.is_tensor(y) and y or y[1] end
local function top1_agree(a, b)
  local ia, ib = a:argmax(2):totable(), b:argmax(2):totable()
  local n = 0
  for i = 1, #ia do
    if ia[i][1] == ib[i][1] then n = n + 1 end
  end
  return n
end

print(string.format("batch %d, input seed %d; errors relative to max |cpu|", batch, seed))
print(string.format("%-16s %9s %10s %10s %10s %10s %8s %16s", "network", "max|cpu|", "vk32 abs", "vk32 rel",
  "vk16 abs", "vk16 rel", "top-1", "weights MB 32/16"))
for net in nets:gmatch("[^,]+") do
  local m <close> = frugal.zoo(net)
  local x = frugal.random_input(m, batch, seed)
  local out, mb = {}, {}
  for _, o in ipairs({{"cpu", {executor = "cpu"}}, {"vk32", {executor = "vulkan"}},
                      {"vk16", {executor = "vulkan", weight_storage = "fp16"}}}) do
    local ex <close> = frugal.executor(m, o[2])
    out[o[1]] = first(ex:run(x))
    if o[1] ~= "cpu" then mb[o[1]] = ex:describe().vulkan.weights_bytes / 1e6 end
  end
  local s = scale(out.cpu)
  local d32, d16 = out.vk32:max_abs_diff(out.cpu), out.vk16:max_abs_diff(out.cpu)
  print(string.format("%-16s %9.3g %10.2e %10.2e %10.2e %10.2e %5d/%d %9.1f/%.1f", net, s, d32, d32 / s, d16,
    d16 / s, top1_agree(out.vk16, out.cpu), batch, mb.vk32, mb.vk16))
end
