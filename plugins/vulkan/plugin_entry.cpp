// The C face of the Vulkan executor: its descriptor, the devices extension
// (FRUGAL_EXT_DEVICES, for `frugal devices`) and the placement extension
// (FRUGAL_EXT_PLACEMENT: the moves a plan makes in the arena, and their cost). The executor table is the
// SDK's (executor_sdk.hpp), generated from frugal::vk::Executor.
#include <cstring>

#include "frugal/executor_sdk.hpp"
#include "vk_executor.h"
#include "vk_instance.h"

namespace {

// Every Vulkan device this plugin sees, as JSON (plugin.h, FRUGAL_EXT_DEVICES).
// Never fails for a missing device: that is reported inside the JSON.
frugal_status devices_json(frugal_blob* out_json, frugal_error* err) {
  return frugal::sdk::guard(err,
                            [&] { frugal::sdk::put_blob(out_json, frugal::vk::describe_devices().dump()); });
}

const frugal_devices_extension kDevices = {sizeof(frugal_devices_extension), &devices_json};

const void* get_extension(const char* id) {
  if (id && std::strcmp(id, FRUGAL_EXT_DEVICES) == 0) return &kDevices;
  if (id && std::strcmp(id, FRUGAL_EXT_PLACEMENT) == 0)
    return &frugal::sdk::placement_extension<frugal::vk::Executor>();
  if (id && std::strcmp(id, FRUGAL_EXT_HOST_WEIGHTS) == 0)
    return &frugal::sdk::host_weights_extension<frugal::vk::Executor>();
  return nullptr;
}

}  // namespace

FRUGAL_DEFINE_PLUGIN_EXT(
    FRUGAL_KIND_EXECUTOR, "vulkan", "0.1.0",
    "Vulkan compute executor: direct and tiled GLSL shaders (SPIR-V), gating-ready conv, one arena of "
    "exactly the budget; runs on any conformant driver, lavapipe included",
    frugal::sdk::executor_api<frugal::vk::Executor>(), &get_extension)
