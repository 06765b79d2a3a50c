-- frugal bench-vulkan: images/s of zoo networks on each Vulkan device next to the CPU executor, and the conv indirection cost
-- Part 1, per network: images/s of whole-batch runs (the executor's own run
-- time: for Vulkan upload, dispatches and download) on the CPU executor and on
-- every Vulkan device, measured side by side in ONE process, interleaved; the
-- ratio to the CPU and the largest |difference| from the CPU executor's output.
-- lavapipe (llvmpipe) is a CPU running a software GPU: its figures are labelled
-- so and say nothing about GPU performance.
-- Part 2 (vulkan_bench, built next to the frugal executable): each conv layer
-- through the gating-ready indirect dispatch against a plain dense dispatch,
-- half the kernels gated off, and the pipeline cache's saving on creation.
local argparse = require("argparse")
local common = require("cli_common")
local bench = require("bench_common")

local a = argparse.parse(arg, {
  options = {
    {"nets", "string", "zoo networks, comma-separated, or \"all\" (a few minutes on lavapipe and 2 cores " ..
     "for the default)", default = "squeezenet1_1,mobilenet_v2,resnet18", metavar = "L"},
    {"batch", "integer", "samples per run", default = 1, min = 1, max = 1024},
    {"repeat", "integer", "timed rounds after a warm-up round; each runs every executor once, in turn; medians",
     default = 3, min = 1},
    {"threads", "integer", "the CPU executor's threads", min = 1, default_text = "one per core"},
    {"devices", "list", "Vulkan device indices (see frugal devices)", min = 0, default_text = "every device"},
    {"weight_storage", "string", "the Vulkan executors' conv kernels: fp32, fp16, or fp32,fp16 for both side " ..
     "by side (a column each per device, timed in the same rounds; docs/VULKAN.md, \"fp16 weights\")",
     default = "fp32", metavar = "L"},
    {"no_conv", "flag", "skip the conv-layer part (vulkan_bench)"},
    {"conv_repeat", "integer", "vulkan_bench's --repeats", default = 3, min = 1},
    {"conv_size", "integer", "vulkan_bench's --size", default = 28, min = 4},
    {"conv_batch", "integer", "vulkan_bench's --batch", default = 4, min = 1},
  },
  progress = true,
})
local progress = require("progress").new(a.quiet)
local nets = bench.nets(a.nets, {exclude_toys = true})
local storages = {}
for w in a.weight_storage:gmatch("[^,]+") do
  if w ~= "fp32" and w ~= "fp16" then
    common.fail("--weight-storage: " .. w .. " is not fp32 or fp16", 2)
  end
  storages[#storages + 1] = w
end
if #storages == 0 then common.fail("--weight-storage: give fp32, fp16 or both", 2) end

-- A CPU implementation of Vulkan (lavapipe's llvmpipe, SwiftShader) measures this
-- machine's CPU, not a GPU.
local function software(d)
  return d.type == "cpu" or (d.name or ""):lower():find("llvmpipe") ~= nil or
         (d.name or ""):lower():find("swiftshader") ~= nil
end
local SOFTWARE_LABEL = "CPU running a software GPU -- not GPU performance"

local info = frugal.devices().vulkan
local devices = {}
if info.available then
  local wanted
  if a.devices then
    wanted = {}
    for _, i in ipairs(a.devices) do wanted[i] = true end
  end
  for _, d in ipairs(info.devices) do
    if not wanted or wanted[d.index] then devices[#devices + 1] = d end
  end
  if a.devices and #devices ~= #a.devices then
    local known = {}
    for _, d in ipairs(info.devices) do known[#known + 1] = tostring(d.index) end
    common.fail("--devices: this machine's Vulkan devices are " .. table.concat(known, ", ") .. " (frugal devices)", 2)
  end
end

print("command     frugal bench-vulkan " .. table.concat(arg, " "))
print(bench.machine_line())
if not info.available then
  print("vulkan      no Vulkan device (" .. (info.error or "the loader lists none") .. "): CPU executor only")
else
  print("vulkan      loader " .. tostring(info.loader) .. (info.validation and
        ", VALIDATION LAYER ON (slows every run: unset FRUGAL_VULKAN_VALIDATION to time)" or ""))
  for _, d in ipairs(devices) do
    print(string.format("device %d    %s (%s, driver %s, Vulkan %s)%s", d.index, d.name, d.type, d.driver,
                        d.api_version, software(d) and (": " .. SOFTWARE_LABEL) or ""))
  end
end
print(string.format("setting     batch %d, %d timed round%s after a warm-up, median; CPU executor threads: %s",
                    a.batch, a["repeat"], a["repeat"] == 1 and "" or "s", a.threads and tostring(a.threads) or "default"))
print("")

-- Part 1: the network table.
local header = {"network", "batch", "cpu img/s"}
local widths = {-16, 5, 10}
-- One column group per device and weight storage ("vk0" fp32, "vk0.f16" fp16).
local function column(d, w) return "vk" .. d.index .. (w == "fp16" and ".f16" or "") end
for _, d in ipairs(devices) do
  for _, w in ipairs(storages) do
    local n = #header
    header[n + 1], header[n + 2], header[n + 3] = column(d, w) .. " img/s", "vs cpu", "max|diff|"
    widths[n + 1], widths[n + 2], widths[n + 3] = math.max(11, #header[n + 1]), 7, 10
  end
end
local row = bench.row_printer(widths)
row(header)
local shader_dir  -- the folder the host gave the Vulkan executors, for vulkan_bench

local function first_output(y) return frugal.is_tensor(y) and y or y[1] end

for _, name in ipairs(nets) do
  progress:stage("preparing " .. name)
  local m = common.try(frugal.zoo, name)
  local x = common.try(frugal.random_input, m, a.batch, 0)
  local variants = {}
  local cpu = common.try(frugal.executor, m, {executor = "cpu", threads = a.threads})
  variants[1] = {name = name .. " on cpu", ex = cpu}
  for _, d in ipairs(devices) do
    for _, w in ipairs(storages) do
      local label = name .. " on vulkan device " .. d.index .. (w == "fp16" and " (fp16 weights)" or "")
      local ok, ex = pcall(frugal.executor, m, {executor = "vulkan", device = d.index, weight_storage = w})
      if ok then
        variants[#variants + 1] = {name = label, ex = ex, device = d}
        shader_dir = shader_dir or ex:describe().vulkan.shader_dir
      else
        variants[#variants + 1] = {name = label, failed = common.message(ex), device = d}
      end
    end
  end
  for _, v in ipairs(variants) do
    if not v.failed then
      v.run = function()
        local y, report = common.try(v.ex.run, v.ex, x)
        v.output = first_output(y)
        return report.seconds
      end
    else
      v.run = function() return 0 end
    end
  end
  bench.interleave(variants, a["repeat"], progress)
  progress:done()
  local cells = {name, tostring(a.batch), string.format("%.2f", a.batch / variants[1].median)}
  for i = 2, #variants do
    local v = variants[i]
    local n = #cells
    if v.failed then
      cells[n + 1], cells[n + 2], cells[n + 3] = "failed", "", ""
      io.stderr:write("frugal: " .. v.name .. ": " .. v.failed .. "\n")
    else
      cells[n + 1] = string.format("%.2f", a.batch / v.median)
      cells[n + 2] = string.format("%.3gx", variants[1].median / v.median)
      cells[n + 3] = string.format("%.1e", v.output:max_abs_diff(variants[1].output))
    end
  end
  row(cells)
  -- Free this network's executors (and their arenas) before the next one.
  for _, v in ipairs(variants) do
    if v.ex then v.ex:close() end
  end
end

-- Part 2: conv layers, indirect vs dense, gated, pipeline cache.
if a.no_conv or #devices == 0 then os.exit(0) end
for _, d in ipairs(devices) do
  print("")
  print(string.format("conv layers on device %d (%s)%s", d.index, d.name, software(d) and (": " .. SOFTWARE_LABEL) or ""))
  local cmd = {bench.sibling_program("vulkan_bench"), "--device", tostring(d.index), "--batch", tostring(a.conv_batch),
               "--repeats", tostring(a.conv_repeat), "--size", tostring(a.conv_size)}
  if shader_dir then cmd[#cmd + 1] = "--shader-dir"; cmd[#cmd + 1] = shader_dir end
  print("command     " .. table.concat(cmd, " "))
  bench.run_program(cmd)
end
