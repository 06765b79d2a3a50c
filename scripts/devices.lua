-- frugal devices: list the Vulkan devices (name, type, driver, API version, memory heaps and budget) and which one is used
-- The vulkan executor uses the marked device unless told otherwise: option
-- {"device": N} or FRUGAL_VULKAN_DEVICE=N picks device N; by default the first
-- discrete GPU, else integrated, virtual, then a CPU driver such as lavapipe.
-- FRUGAL_VULKAN_VALIDATION=1 turns the Khronos validation layer on.
-- Exits 1 (with the reason) when there is no Vulkan loader, driver or device.
local argparse = require("argparse")
local fmt = require("textfmt")

local a = argparse.parse(arg, {
  json = "print the raw device data (JSON) instead of the table",
  notes = "The vulkan executor uses the device marked * unless told otherwise: FRUGAL_VULKAN_DEVICE=N or the " ..
          "executor option device = N. Exits 1 when there is no Vulkan loader, driver or device.",
})

if not frugal.devices then
  io.stderr:write("frugal: this build has no device listing (frugal.devices is not registered)\n")
  os.exit(1)
end

local info, json = frugal.devices()
if a.json then
  print(json)
  os.exit(info.vulkan.available and 0 or 1)
end

local vk = info.vulkan
if not vk.available then
  io.stderr:write("frugal: no Vulkan device: " .. (vk.error or "the loader lists none") .. "\n")
  io.stderr:write("frugal: the cpu executor still works (executor = \"cpu\")\n")
  os.exit(1)
end

local function mem(n) return n and frugal.format_bytes(n, true) or "?" end

print("Vulkan loader " .. vk.loader .. ", instance API " .. vk.instance_api_version ..
      (vk.validation and ", validation layer on" or ""))
local rows = {{"", "#", "name", "type", "driver", "API"}}
for _, d in ipairs(vk.devices) do
  rows[#rows + 1] = {d.index == vk.default and "*" or "", tostring(d.index), d.name, d.type, d.driver, d.api_version}
end
print(fmt.table(rows, {nil, "r"}))
for _, d in ipairs(vk.devices) do
  print("device " .. d.index .. " memory" .. (d.memory_budget_extension and "" or " (no VK_EXT_memory_budget: budget unknown)"))
  for h, heap in ipairs(d.heaps) do
    local line = string.format("  heap %d: %s%s", h - 1, mem(heap.size), heap.device_local and ", device-local" or "")
    if heap.budget then line = line .. string.format(", budget %s (%s in use)", mem(heap.budget), mem(heap.usage)) end
    print(line)
  end
  local l = d.limits
  print(string.format("  largest binding %s, work groups up to %d invocations%s", mem(l.max_storage_buffer_range),
                      l.max_compute_work_group_invocations, d.compute and "" or ", NO compute queue"))
end
local chosen = vk.FRUGAL_VULKAN_DEVICE and ("FRUGAL_VULKAN_DEVICE=" .. vk.FRUGAL_VULKAN_DEVICE .. " picks device " ..
               vk.FRUGAL_VULKAN_DEVICE) or ("* default: device " .. vk.default .. " (discrete > integrated > virtual > cpu)")
print(chosen)
