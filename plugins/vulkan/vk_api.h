// The Vulkan API as this plugin uses it: the loader (libvulkan.so.1) is opened
// lazily with dlopen, and every entry point is fetched through
// vkGetInstanceProcAddr / vkGetDeviceProcAddr into the tables below. So the
// plugin loads (and the cpu executor stays usable) on a machine without a
// Vulkan loader; create() then fails with FRUGAL_ERR_DEVICE and says why.
#pragma once

#ifndef VK_NO_PROTOTYPES
#define VK_NO_PROTOTYPES
#endif
#include <vulkan/vulkan.h>

#include <string>

namespace frugal::vk {

#define FRUGAL_VK_GLOBAL_FUNCTIONS(X)       \
  X(vkCreateInstance)                       \
  X(vkEnumerateInstanceExtensionProperties) \
  X(vkEnumerateInstanceLayerProperties)

#define FRUGAL_VK_INSTANCE_FUNCTIONS(X)       \
  X(vkDestroyInstance)                        \
  X(vkEnumeratePhysicalDevices)               \
  X(vkGetPhysicalDeviceProperties)            \
  X(vkGetPhysicalDeviceFeatures)              \
  X(vkGetPhysicalDeviceMemoryProperties)      \
  X(vkGetPhysicalDeviceQueueFamilyProperties) \
  X(vkEnumerateDeviceExtensionProperties)     \
  X(vkCreateDevice)                           \
  X(vkGetDeviceProcAddr)

// Entry points of Vulkan 1.1 or of instance extensions: may be null.
#define FRUGAL_VK_OPTIONAL_INSTANCE_FUNCTIONS(X) \
  X(vkGetPhysicalDeviceProperties2)              \
  X(vkGetPhysicalDeviceMemoryProperties2)        \
  X(vkCreateDebugUtilsMessengerEXT)              \
  X(vkDestroyDebugUtilsMessengerEXT)

#define FRUGAL_VK_DEVICE_FUNCTIONS(X) \
  X(vkDestroyDevice)                  \
  X(vkGetDeviceQueue)                 \
  X(vkDeviceWaitIdle)                 \
  X(vkCreateBuffer)                   \
  X(vkDestroyBuffer)                  \
  X(vkCreateBufferView)               \
  X(vkDestroyBufferView)              \
  X(vkGetBufferMemoryRequirements)    \
  X(vkAllocateMemory)                 \
  X(vkFreeMemory)                     \
  X(vkBindBufferMemory)               \
  X(vkMapMemory)                      \
  X(vkUnmapMemory)                    \
  X(vkCreateShaderModule)             \
  X(vkDestroyShaderModule)            \
  X(vkCreateDescriptorSetLayout)      \
  X(vkDestroyDescriptorSetLayout)     \
  X(vkCreatePipelineLayout)           \
  X(vkDestroyPipelineLayout)          \
  X(vkCreatePipelineCache)            \
  X(vkDestroyPipelineCache)           \
  X(vkGetPipelineCacheData)           \
  X(vkCreateComputePipelines)         \
  X(vkDestroyPipeline)                \
  X(vkCreateDescriptorPool)           \
  X(vkDestroyDescriptorPool)          \
  X(vkAllocateDescriptorSets)         \
  X(vkFreeDescriptorSets)             \
  X(vkUpdateDescriptorSets)           \
  X(vkCreateCommandPool)              \
  X(vkDestroyCommandPool)             \
  X(vkAllocateCommandBuffers)         \
  X(vkFreeCommandBuffers)             \
  X(vkResetCommandBuffer)             \
  X(vkBeginCommandBuffer)             \
  X(vkEndCommandBuffer)               \
  X(vkCmdBindPipeline)                \
  X(vkCmdBindDescriptorSets)          \
  X(vkCmdPushConstants)               \
  X(vkCmdDispatch)                    \
  X(vkCmdDispatchIndirect)            \
  X(vkCmdPipelineBarrier)             \
  X(vkCmdCopyBuffer)                  \
  X(vkCmdFillBuffer)                  \
  X(vkCmdWriteTimestamp)              \
  X(vkCmdResetQueryPool)              \
  X(vkCreateQueryPool)                \
  X(vkDestroyQueryPool)               \
  X(vkGetQueryPoolResults)            \
  X(vkQueueSubmit)                    \
  X(vkCreateFence)                    \
  X(vkDestroyFence)                   \
  X(vkWaitForFences)                  \
  X(vkResetFences)                    \
  X(vkCreateEvent)                    \
  X(vkDestroyEvent)                   \
  X(vkSetEvent)                       \
  X(vkCmdWaitEvents)

#define FRUGAL_VK_MEMBER(name) PFN_##name name = nullptr;

struct GlobalFunctions {
  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
  PFN_vkEnumerateInstanceVersion vkEnumerateInstanceVersion = nullptr;  // null: a 1.0 loader
  FRUGAL_VK_GLOBAL_FUNCTIONS(FRUGAL_VK_MEMBER)
  std::string library;  // the file that was opened
};

struct InstanceFunctions {
  FRUGAL_VK_INSTANCE_FUNCTIONS(FRUGAL_VK_MEMBER)
  FRUGAL_VK_OPTIONAL_INSTANCE_FUNCTIONS(FRUGAL_VK_MEMBER)
  void load(const GlobalFunctions& g, VkInstance instance);
};

struct DeviceFunctions {
  FRUGAL_VK_DEVICE_FUNCTIONS(FRUGAL_VK_MEMBER)
  void load(const InstanceFunctions& i, VkDevice device);
};

#undef FRUGAL_VK_MEMBER

// The loader, opened once per process: $FRUGAL_VULKAN_LOADER if set, else
// libvulkan.so.1. Throws sdk::Failure(FRUGAL_ERR_DEVICE) naming the library and
// the dlopen error when it is missing.
const GlobalFunctions& loader();

// "VK_ERROR_OUT_OF_DEVICE_MEMORY" for a VkResult.
std::string result_name(VkResult r);
// Throws sdk::Failure for r < 0: FRUGAL_ERR_OUT_OF_MEMORY for the out-of-memory
// codes, FRUGAL_ERR_DEVICE otherwise; the message is "<what>: <result name>".
void check(VkResult r, const std::string& what);

}  // namespace frugal::vk
