#include "vk_api.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "frugal/plugin_sdk.hpp"

namespace frugal::vk {

namespace {

template <class Fn>
Fn instance_proc(const GlobalFunctions& g, VkInstance instance, const char* name) {
  return reinterpret_cast<Fn>(g.vkGetInstanceProcAddr(instance, name));
}

}  // namespace

const GlobalFunctions& loader() {
  static std::mutex mutex;
  static GlobalFunctions table;
  static std::string failure;  // sticky: a missing loader stays missing for this process
  std::lock_guard<std::mutex> lock(mutex);
  if (table.vkGetInstanceProcAddr) return table;
  if (!failure.empty()) throw sdk::Failure(FRUGAL_ERR_DEVICE, failure);
  const char* env = std::getenv("FRUGAL_VULKAN_LOADER");
  const std::string lib = env && *env ? env : "libvulkan.so.1";
  void* handle = dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    const char* why = dlerror();
    failure = "no Vulkan loader: cannot open " + lib + " (" + (why ? why : "unknown error") +
              "); install the Vulkan loader (Debian: libvulkan1) and a driver, or use the cpu executor";
    throw sdk::Failure(FRUGAL_ERR_DEVICE, failure);
  }
  auto gipa = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(handle, "vkGetInstanceProcAddr"));
  if (!gipa) {
    failure = lib + " is not a Vulkan loader: it has no vkGetInstanceProcAddr";
    dlclose(handle);
    throw sdk::Failure(FRUGAL_ERR_DEVICE, failure);
  }
  GlobalFunctions g;
  g.vkGetInstanceProcAddr = gipa;
  g.library = lib;
  g.vkEnumerateInstanceVersion =
      instance_proc<PFN_vkEnumerateInstanceVersion>(g, nullptr, "vkEnumerateInstanceVersion");
#define FRUGAL_VK_LOAD(name)                                \
  g.name = instance_proc<PFN_##name>(g, nullptr, #name);    \
  if (!g.name) {                                            \
    failure = lib + " lacks the Vulkan entry point " #name; \
    throw sdk::Failure(FRUGAL_ERR_DEVICE, failure);         \
  }
  FRUGAL_VK_GLOBAL_FUNCTIONS(FRUGAL_VK_LOAD)
#undef FRUGAL_VK_LOAD
  table = g;  // the handle stays open for the life of the process
  return table;
}

void InstanceFunctions::load(const GlobalFunctions& g, VkInstance instance) {
#define FRUGAL_VK_LOAD(name)                            \
  name = instance_proc<PFN_##name>(g, instance, #name); \
  if (!name) throw sdk::Failure(FRUGAL_ERR_DEVICE, "the Vulkan instance lacks the entry point " #name);
  FRUGAL_VK_INSTANCE_FUNCTIONS(FRUGAL_VK_LOAD)
#undef FRUGAL_VK_LOAD
#define FRUGAL_VK_LOAD_OPTIONAL(name) name = instance_proc<PFN_##name>(g, instance, #name);
  FRUGAL_VK_OPTIONAL_INSTANCE_FUNCTIONS(FRUGAL_VK_LOAD_OPTIONAL)
#undef FRUGAL_VK_LOAD_OPTIONAL
}

void DeviceFunctions::load(const InstanceFunctions& i, VkDevice device) {
#define FRUGAL_VK_LOAD(name)                                                 \
  name = reinterpret_cast<PFN_##name>(i.vkGetDeviceProcAddr(device, #name)); \
  if (!name) throw sdk::Failure(FRUGAL_ERR_DEVICE, "the Vulkan device lacks the entry point " #name);
  FRUGAL_VK_DEVICE_FUNCTIONS(FRUGAL_VK_LOAD)
#undef FRUGAL_VK_LOAD
}

std::string result_name(VkResult r) {
  switch (r) {
#define FRUGAL_VK_CASE(x) \
  case x:                 \
    return #x;
    FRUGAL_VK_CASE(VK_SUCCESS)
    FRUGAL_VK_CASE(VK_NOT_READY)
    FRUGAL_VK_CASE(VK_TIMEOUT)
    FRUGAL_VK_CASE(VK_INCOMPLETE)
    FRUGAL_VK_CASE(VK_ERROR_OUT_OF_HOST_MEMORY)
    FRUGAL_VK_CASE(VK_ERROR_OUT_OF_DEVICE_MEMORY)
    FRUGAL_VK_CASE(VK_ERROR_INITIALIZATION_FAILED)
    FRUGAL_VK_CASE(VK_ERROR_DEVICE_LOST)
    FRUGAL_VK_CASE(VK_ERROR_MEMORY_MAP_FAILED)
    FRUGAL_VK_CASE(VK_ERROR_LAYER_NOT_PRESENT)
    FRUGAL_VK_CASE(VK_ERROR_EXTENSION_NOT_PRESENT)
    FRUGAL_VK_CASE(VK_ERROR_FEATURE_NOT_PRESENT)
    FRUGAL_VK_CASE(VK_ERROR_INCOMPATIBLE_DRIVER)
    FRUGAL_VK_CASE(VK_ERROR_TOO_MANY_OBJECTS)
    FRUGAL_VK_CASE(VK_ERROR_FORMAT_NOT_SUPPORTED)
    FRUGAL_VK_CASE(VK_ERROR_FRAGMENTED_POOL)
    FRUGAL_VK_CASE(VK_ERROR_UNKNOWN)
    FRUGAL_VK_CASE(VK_ERROR_OUT_OF_POOL_MEMORY)
    FRUGAL_VK_CASE(VK_ERROR_INVALID_EXTERNAL_HANDLE)
    FRUGAL_VK_CASE(VK_ERROR_FRAGMENTATION)
    FRUGAL_VK_CASE(VK_PIPELINE_COMPILE_REQUIRED)
#undef FRUGAL_VK_CASE
    default:
      return "VkResult " + std::to_string(int(r));
  }
}

void check(VkResult r, const std::string& what) {
  if (r >= 0) return;
  const frugal_status s = r == VK_ERROR_OUT_OF_HOST_MEMORY || r == VK_ERROR_OUT_OF_DEVICE_MEMORY ||
                                  r == VK_ERROR_OUT_OF_POOL_MEMORY || r == VK_ERROR_FRAGMENTED_POOL
                              ? FRUGAL_ERR_OUT_OF_MEMORY
                              : FRUGAL_ERR_DEVICE;
  throw sdk::Failure(s, what + ": " + result_name(r));
}

}  // namespace frugal::vk
