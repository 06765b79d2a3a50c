// The Vulkan instance and what it knows about the machine's devices: names,
// types, drivers, limits and memory heaps (with the budget the driver reports
// through VK_EXT_memory_budget where supported), the default choice (discrete,
// then integrated, then virtual, then CPU), and the validation layer.
//
// With validation on (env FRUGAL_VULKAN_VALIDATION=1), VK_LAYER_KHRONOS_validation
// is enabled with a debug-utils messenger that counts the errors it reports, so
// that a run can fail on them and tests can assert there were none.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "vk_api.h"

namespace frugal::vk {

struct HeapInfo {
  uint64_t size = 0;
  bool device_local = false;
  int64_t budget = -1;  // bytes the process may still use (VK_EXT_memory_budget); -1: unknown
  int64_t usage = -1;
};

struct PhysicalDeviceInfo {
  int index = 0;  // in vkEnumeratePhysicalDevices order: what {"device": N} picks
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  std::string name, type, driver;  // type: "discrete", "integrated", "virtual", "cpu", "other"
  VkPhysicalDeviceType vk_type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
  uint32_t api_version = 0, driver_version = 0, vendor_id = 0, device_id = 0;
  std::array<uint8_t, VK_UUID_SIZE> uuid{};
  VkPhysicalDeviceLimits limits{};
  uint64_t max_allocation_bytes = 0;  // maxMemoryAllocationSize (0: unknown)
  bool memory_budget_extension = false;
  int compute_queue_family = -1;      // -1: no compute queue (unusable)
  uint32_t timestamp_valid_bits = 0;  // of that queue family
  std::vector<HeapInfo> heaps;

  std::string api_version_string() const;
  std::string uuid_hex() const;
  nlohmann::json to_json() const;
};

class Instance {
 public:
  // Creates the instance; throws sdk::Failure(FRUGAL_ERR_DEVICE) with a message
  // for the user when there is no loader, no driver, or (validation asked) no
  // validation layer.
  explicit Instance(bool validation);
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  VkInstance handle() const { return instance_; }
  const InstanceFunctions& fn() const { return fn_; }
  bool validation() const { return validation_; }
  uint32_t api_version() const { return api_version_; }

  // Every physical device (heaps and budgets read now).
  std::vector<PhysicalDeviceInfo> devices() const;
  // The device to use: `requested` >= 0 (option "device"), else env
  // FRUGAL_VULKAN_DEVICE, else the best by type. Throws naming the devices
  // when there are none or the index is out of range.
  PhysicalDeviceInfo choose(int requested) const;
  // Index of the best device by type among those with a compute queue; -1 if none.
  static int best(const std::vector<PhysicalDeviceInfo>& devices);

  // Validation messages of severity error since the instance was created.
  uint64_t validation_errors() const { return errors_.load(); }
  // The first few of them (for messages).
  std::vector<std::string> validation_messages() const;

 private:
  static VKAPI_ATTR VkBool32 VKAPI_CALL on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                   VkDebugUtilsMessageTypeFlagsEXT types,
                                                   const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                   void* self);

  InstanceFunctions fn_;
  VkInstance instance_ = VK_NULL_HANDLE;
  VkDebugUtilsMessengerEXT messenger_ = VK_NULL_HANDLE;
  bool validation_ = false;
  uint32_t api_version_ = VK_API_VERSION_1_0;
  std::atomic<uint64_t> errors_{0};
  mutable std::mutex messages_mutex_;
  std::vector<std::string> messages_;
};

// Is FRUGAL_VULKAN_VALIDATION set to a true value ("1", "true", "on", "yes")?
bool validation_requested();

// The process-wide instance for this validation setting (created on first use,
// kept while anyone holds it).
std::shared_ptr<Instance> shared_instance(bool validation);

// {"loader": "...", "devices": [...], "default": N, "validation": bool} or
// {"error": "..."} when there is no loader, driver or device: what
// `frugal devices` prints.
nlohmann::json describe_devices();

}  // namespace frugal::vk
