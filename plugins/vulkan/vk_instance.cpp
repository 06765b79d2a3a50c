#include "vk_instance.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "frugal/error.h"
#include "frugal/plugin_sdk.hpp"

namespace frugal::vk {

namespace {

const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

std::string type_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return "cpu";
    default:
      return "other";
  }
}

// Lower is better: the default device order.
int type_rank(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return 0;
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return 1;
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return 2;
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return 3;
    default:
      return 4;
  }
}

std::string version_string(uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) + "." +
         std::to_string(VK_API_VERSION_PATCH(v));
}

bool has_extension(const std::vector<VkExtensionProperties>& list, const char* name) {
  return std::any_of(list.begin(), list.end(),
                     [&](const VkExtensionProperties& e) { return std::strcmp(e.extensionName, name) == 0; });
}

std::string icd_hint() {
  std::string hint;
  for (const char* var : {"VK_ICD_FILENAMES", "VK_DRIVER_FILES"}) {
    const char* v = std::getenv(var);
    if (v && *v) hint += std::string(hint.empty() ? " (" : ", ") + var + "=" + v;
  }
  return hint.empty() ? hint : hint + ")";
}

}  // namespace

std::string PhysicalDeviceInfo::api_version_string() const { return version_string(api_version); }

std::string PhysicalDeviceInfo::uuid_hex() const {
  std::string s;
  char buf[3];
  for (uint8_t b : uuid) {
    std::snprintf(buf, sizeof buf, "%02x", b);
    s += buf;
  }
  return s;
}

nlohmann::json PhysicalDeviceInfo::to_json() const {
  nlohmann::json heaps_json = nlohmann::json::array();
  for (const HeapInfo& h : heaps) {
    nlohmann::json j = {{"size", h.size}, {"device_local", h.device_local}};
    if (h.budget >= 0) j["budget"] = h.budget;
    if (h.usage >= 0) j["usage"] = h.usage;
    heaps_json.push_back(j);
  }
  return {{"index", index},
          {"name", name},
          {"type", type},
          {"driver", driver},
          {"api_version", api_version_string()},
          {"vendor_id", vendor_id},
          {"device_id", device_id},
          {"uuid", uuid_hex()},
          {"memory_budget_extension", memory_budget_extension},
          {"compute", compute_queue_family >= 0},
          {"heaps", heaps_json},
          {"limits",
           {{"max_storage_buffer_range", limits.maxStorageBufferRange},
            {"min_storage_buffer_offset_alignment", limits.minStorageBufferOffsetAlignment},
            {"max_compute_work_group_invocations", limits.maxComputeWorkGroupInvocations},
            {"max_compute_work_group_size",
             {limits.maxComputeWorkGroupSize[0], limits.maxComputeWorkGroupSize[1],
              limits.maxComputeWorkGroupSize[2]}},
            {"max_compute_work_group_count",
             {limits.maxComputeWorkGroupCount[0], limits.maxComputeWorkGroupCount[1],
              limits.maxComputeWorkGroupCount[2]}},
            {"max_push_constants_size", limits.maxPushConstantsSize},
            {"max_memory_allocation_size", max_allocation_bytes},
            {"timestamp_period_ns", limits.timestampPeriod}}}};
}

bool validation_requested() {
  const char* v = std::getenv("FRUGAL_VULKAN_VALIDATION");
  if (!v) return false;
  std::string s(v);
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s == "1" || s == "true" || s == "on" || s == "yes";
}

Instance::Instance(bool validation) : validation_(validation) {
  const GlobalFunctions& g = loader();
  uint32_t loader_version = VK_API_VERSION_1_0;
  if (g.vkEnumerateInstanceVersion) g.vkEnumerateInstanceVersion(&loader_version);
  api_version_ = loader_version >= VK_API_VERSION_1_2   ? VK_API_VERSION_1_2
                 : loader_version >= VK_API_VERSION_1_1 ? VK_API_VERSION_1_1
                                                        : VK_API_VERSION_1_0;

  std::vector<const char*> layers, extensions;
  if (validation_) {
    uint32_t n = 0;
    check(g.vkEnumerateInstanceLayerProperties(&n, nullptr), "vkEnumerateInstanceLayerProperties");
    std::vector<VkLayerProperties> props(n);
    check(g.vkEnumerateInstanceLayerProperties(&n, props.data()), "vkEnumerateInstanceLayerProperties");
    const bool found = std::any_of(props.begin(), props.begin() + n, [](const VkLayerProperties& p) {
      return std::strcmp(p.layerName, kValidationLayer) == 0;
    });
    if (!found)
      throw sdk::Failure(FRUGAL_ERR_DEVICE, std::string("FRUGAL_VULKAN_VALIDATION is set but the layer ") +
                                                kValidationLayer +
                                                " is not installed (Debian: vulkan-validationlayers)");
    layers.push_back(kValidationLayer);
    uint32_t m = 0;
    check(g.vkEnumerateInstanceExtensionProperties(kValidationLayer, &m, nullptr),
          "vkEnumerateInstanceExtensionProperties");
    std::vector<VkExtensionProperties> ext(m);
    check(g.vkEnumerateInstanceExtensionProperties(kValidationLayer, &m, ext.data()),
          "vkEnumerateInstanceExtensionProperties");
    ext.resize(m);
    if (!has_extension(ext, VK_EXT_DEBUG_UTILS_EXTENSION_NAME))
      throw sdk::Failure(FRUGAL_ERR_DEVICE, std::string("the validation layer does not offer ") +
                                                VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
    extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  }

  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "frugal";
  app.applicationVersion = 1;
  app.pEngineName = "frugal-vulkan";
  app.engineVersion = 1;
  app.apiVersion = api_version_;
  VkInstanceCreateInfo ci{};
  ci.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  ci.pApplicationInfo = &app;
  ci.enabledLayerCount = uint32_t(layers.size());
  ci.ppEnabledLayerNames = layers.data();
  ci.enabledExtensionCount = uint32_t(extensions.size());
  ci.ppEnabledExtensionNames = extensions.data();
  const VkResult r = g.vkCreateInstance(&ci, nullptr, &instance_);
  if (r == VK_ERROR_INCOMPATIBLE_DRIVER)
    throw sdk::Failure(FRUGAL_ERR_DEVICE,
                       "no Vulkan driver: the loader (" + g.library + ") found no usable driver" +
                           icd_hint() +
                           " (VK_ERROR_INCOMPATIBLE_DRIVER); install one (Debian: mesa-vulkan-drivers "
                           "has lavapipe, a CPU driver) or use the cpu executor");
  check(r, "vkCreateInstance");
  try {
    fn_.load(g, instance_);
    if (validation_) {
      if (!fn_.vkCreateDebugUtilsMessengerEXT || !fn_.vkDestroyDebugUtilsMessengerEXT)
        throw sdk::Failure(FRUGAL_ERR_DEVICE, "VK_EXT_debug_utils is enabled but its functions are missing");
      VkDebugUtilsMessengerCreateInfoEXT mi{};
      mi.sType = VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT;
      mi.messageSeverity =
          VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT;
      mi.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                       VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
      mi.pfnUserCallback = &Instance::on_message;
      mi.pUserData = this;
      check(fn_.vkCreateDebugUtilsMessengerEXT(instance_, &mi, nullptr, &messenger_),
            "vkCreateDebugUtilsMessengerEXT");
    }
  } catch (...) {
    if (fn_.vkDestroyInstance) fn_.vkDestroyInstance(instance_, nullptr);
    throw;
  }
}

Instance::~Instance() {
  if (messenger_) fn_.vkDestroyDebugUtilsMessengerEXT(instance_, messenger_, nullptr);
  if (instance_) fn_.vkDestroyInstance(instance_, nullptr);
}

VKAPI_ATTR VkBool32 VKAPI_CALL Instance::on_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                    VkDebugUtilsMessageTypeFlagsEXT,
                                                    const VkDebugUtilsMessengerCallbackDataEXT* data,
                                                    void* self) {
  auto* inst = static_cast<Instance*>(self);
  const char* text = data && data->pMessage ? data->pMessage : "(no message)";
  if (severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) {
    inst->errors_.fetch_add(1);
    std::lock_guard<std::mutex> lock(inst->messages_mutex_);
    if (inst->messages_.size() < 8) inst->messages_.push_back(text);
    std::fprintf(stderr, "frugal vulkan: validation error: %s\n", text);
  } else {
    std::fprintf(stderr, "frugal vulkan: validation warning: %s\n", text);
  }
  return VK_FALSE;
}

std::vector<std::string> Instance::validation_messages() const {
  std::lock_guard<std::mutex> lock(messages_mutex_);
  return messages_;
}

std::vector<PhysicalDeviceInfo> Instance::devices() const {
  uint32_t n = 0;
  check(fn_.vkEnumeratePhysicalDevices(instance_, &n, nullptr), "vkEnumeratePhysicalDevices");
  std::vector<VkPhysicalDevice> handles(n);
  if (n) check(fn_.vkEnumeratePhysicalDevices(instance_, &n, handles.data()), "vkEnumeratePhysicalDevices");
  handles.resize(n);
  std::vector<PhysicalDeviceInfo> out;
  for (uint32_t i = 0; i < n; ++i) {
    PhysicalDeviceInfo d;
    d.index = int(i);
    d.handle = handles[i];
    VkPhysicalDeviceProperties p{};
    fn_.vkGetPhysicalDeviceProperties(handles[i], &p);
    d.name = p.deviceName;
    d.vk_type = p.deviceType;
    d.type = type_name(p.deviceType);
    d.api_version = p.apiVersion;
    d.driver_version = p.driverVersion;
    d.vendor_id = p.vendorID;
    d.device_id = p.deviceID;
    std::memcpy(d.uuid.data(), p.pipelineCacheUUID, VK_UUID_SIZE);
    d.limits = p.limits;

    uint32_t m = 0;
    check(fn_.vkEnumerateDeviceExtensionProperties(handles[i], nullptr, &m, nullptr),
          "vkEnumerateDeviceExtensionProperties");
    std::vector<VkExtensionProperties> ext(m);
    if (m)
      check(fn_.vkEnumerateDeviceExtensionProperties(handles[i], nullptr, &m, ext.data()),
            "vkEnumerateDeviceExtensionProperties");
    ext.resize(m);
    d.memory_budget_extension = has_extension(ext, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);

    const bool v11 = api_version_ >= VK_API_VERSION_1_1 && p.apiVersion >= VK_API_VERSION_1_1 &&
                     fn_.vkGetPhysicalDeviceProperties2;
    if (v11) {
      VkPhysicalDeviceProperties2 p2{};
      p2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
      VkPhysicalDeviceMaintenance3Properties m3{};
      m3.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES;
      VkPhysicalDeviceDriverProperties drv{};
      drv.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES;
      p2.pNext = &m3;
      const bool driver_props = (api_version_ >= VK_API_VERSION_1_2 && p.apiVersion >= VK_API_VERSION_1_2) ||
                                has_extension(ext, VK_KHR_DRIVER_PROPERTIES_EXTENSION_NAME);
      if (driver_props) m3.pNext = &drv;
      fn_.vkGetPhysicalDeviceProperties2(handles[i], &p2);
      d.max_allocation_bytes = m3.maxMemoryAllocationSize;
      if (driver_props) {
        d.driver = drv.driverName;
        if (drv.driverInfo[0]) d.driver += std::string(" ") + drv.driverInfo;
      }
    }
    if (d.driver.empty()) d.driver = "driver version " + std::to_string(p.driverVersion);

    VkPhysicalDeviceMemoryProperties mem{};
    VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{};
    budget.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT;
    const bool with_budget = v11 && d.memory_budget_extension && fn_.vkGetPhysicalDeviceMemoryProperties2;
    if (with_budget) {
      VkPhysicalDeviceMemoryProperties2 m2{};
      m2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2;
      m2.pNext = &budget;
      fn_.vkGetPhysicalDeviceMemoryProperties2(handles[i], &m2);
      mem = m2.memoryProperties;
    } else {
      fn_.vkGetPhysicalDeviceMemoryProperties(handles[i], &mem);
    }
    for (uint32_t h = 0; h < mem.memoryHeapCount; ++h) {
      HeapInfo heap;
      heap.size = mem.memoryHeaps[h].size;
      heap.device_local = (mem.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0;
      if (with_budget) {
        heap.budget = int64_t(budget.heapBudget[h]);
        heap.usage = int64_t(budget.heapUsage[h]);
      }
      d.heaps.push_back(heap);
    }

    uint32_t qn = 0;
    fn_.vkGetPhysicalDeviceQueueFamilyProperties(handles[i], &qn, nullptr);
    std::vector<VkQueueFamilyProperties> qf(qn);
    fn_.vkGetPhysicalDeviceQueueFamilyProperties(handles[i], &qn, qf.data());
    for (uint32_t q = 0; q < qn; ++q) {
      if (qf[q].queueFlags & VK_QUEUE_COMPUTE_BIT) {
        d.compute_queue_family = int(q);
        d.timestamp_valid_bits = qf[q].timestampValidBits;
        break;
      }
    }
    out.push_back(d);
  }
  return out;
}

int Instance::best(const std::vector<PhysicalDeviceInfo>& devices) {
  int best = -1;
  for (const PhysicalDeviceInfo& d : devices) {
    if (d.compute_queue_family < 0) continue;
    if (best < 0 || type_rank(d.vk_type) < type_rank(devices[size_t(best)].vk_type)) best = d.index;
  }
  return best;
}

PhysicalDeviceInfo Instance::choose(int requested) const {
  const std::vector<PhysicalDeviceInfo> devs = devices();
  const GlobalFunctions& g = loader();
  if (devs.empty())
    throw sdk::Failure(FRUGAL_ERR_DEVICE,
                       "no Vulkan device: the loader (" + g.library + ") lists no physical device" +
                           icd_hint() +
                           "; install a driver (Debian: mesa-vulkan-drivers) or use the cpu executor");
  std::string list;
  for (const PhysicalDeviceInfo& d : devs)
    list += (list.empty() ? "" : ", ") + std::to_string(d.index) + ": " + d.name + " (" + d.type + ")";
  int index = requested;
  std::string source = "option \"device\"";
  if (index < 0) {
    const char* env = std::getenv("FRUGAL_VULKAN_DEVICE");
    if (env && *env) {
      char* end = nullptr;
      const long v = std::strtol(env, &end, 10);
      if (*end != '\0' || v < 0)
        throw Error(std::string("FRUGAL_VULKAN_DEVICE='") + env +
                    "' is not a device index (devices: " + list + ")");
      index = int(v);
      source = "FRUGAL_VULKAN_DEVICE";
    }
  }
  if (index < 0) {
    index = best(devs);
    if (index < 0)
      throw sdk::Failure(FRUGAL_ERR_DEVICE, "no Vulkan device with a compute queue (devices: " + list + ")");
  }
  if (size_t(index) >= devs.size())
    throw sdk::Failure(FRUGAL_ERR_INVALID_ARGUMENT, source + " = " + std::to_string(index) +
                                                        ": no such Vulkan device (devices: " + list + ")");
  const PhysicalDeviceInfo& d = devs[size_t(index)];
  if (d.compute_queue_family < 0)
    throw sdk::Failure(FRUGAL_ERR_DEVICE,
                       "Vulkan device " + std::to_string(index) + " (" + d.name + ") has no compute queue");
  return d;
}

std::shared_ptr<Instance> shared_instance(bool validation) {
  static std::mutex mutex;
  static std::weak_ptr<Instance> instances[2];
  std::lock_guard<std::mutex> lock(mutex);
  std::shared_ptr<Instance> inst = instances[validation ? 1 : 0].lock();
  if (!inst) {
    inst = std::make_shared<Instance>(validation);
    instances[validation ? 1 : 0] = inst;
  }
  return inst;
}

nlohmann::json describe_devices() {
  nlohmann::json j;
  try {
    const bool validation = validation_requested();
    std::shared_ptr<Instance> inst = shared_instance(validation);
    const std::vector<PhysicalDeviceInfo> devs = inst->devices();
    j["loader"] = loader().library;
    j["instance_api_version"] = version_string(inst->api_version());
    j["validation"] = validation;
    j["devices"] = nlohmann::json::array();
    for (const PhysicalDeviceInfo& d : devs) j["devices"].push_back(d.to_json());
    j["default"] = Instance::best(devs);
    const char* env = std::getenv("FRUGAL_VULKAN_DEVICE");
    if (env && *env) j["FRUGAL_VULKAN_DEVICE"] = env;
    if (devs.empty()) j["error"] = "no Vulkan device: the loader lists no physical device" + icd_hint();
  } catch (const std::exception& e) {
    j["error"] = e.what();
  }
  return j;
}

}  // namespace frugal::vk
