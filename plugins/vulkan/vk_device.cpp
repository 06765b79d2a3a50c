#include "vk_device.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "frugal/error.h"
#include "frugal/plugin_sdk.hpp"

namespace frugal::vk {

namespace fs = std::filesystem;

namespace {

constexpr uint64_t kStagingBytes = 16u << 20;
constexpr uint32_t kMaxDescriptorSets = 8192;

std::string default_cache_dir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg) return std::string(xdg) + "/frugal";
  const char* home = std::getenv("HOME");
  if (home && *home) return std::string(home) + "/.cache/frugal";
  return "";
}

// The header every pipeline cache blob starts with (Vulkan spec, "Pipeline Cache").
bool cache_header_matches(const std::vector<char>& data, const PhysicalDeviceInfo& info) {
  if (data.size() < 16 + VK_UUID_SIZE) return false;
  uint32_t header[4];
  std::memcpy(header, data.data(), sizeof header);
  return header[0] >= 16 + VK_UUID_SIZE && header[1] == VK_PIPELINE_CACHE_HEADER_VERSION_ONE &&
         header[2] == info.vendor_id && header[3] == info.device_id &&
         std::memcmp(data.data() + 16, info.uuid.data(), VK_UUID_SIZE) == 0;
}

}  // namespace

// ---- Buffer -------------------------------------------------------------------

Buffer::Buffer(Device& d, uint64_t size, VkBufferUsageFlags usage, bool host_visible, const std::string& what)
    : device_(&d), size_(size) {
  if (size == 0) throw Error("internal: zero-sized buffer for " + what);
  const DeviceFunctions& fn = d.fn();
  const uint64_t max_alloc = d.info().max_allocation_bytes;
  if (max_alloc && size > max_alloc)
    throw sdk::Failure(FRUGAL_ERR_OUT_OF_MEMORY, what + ": " + std::to_string(size) +
                                                     " bytes exceed the device's largest allocation (" +
                                                     std::to_string(max_alloc) +
                                                     " bytes, maxMemoryAllocationSize)");
  VkBufferCreateInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  bi.size = size;
  bi.usage = usage;
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  check(fn.vkCreateBuffer(d.handle(), &bi, nullptr, &buffer_), "vkCreateBuffer (" + what + ")");
  VkMemoryRequirements req{};
  fn.vkGetBufferMemoryRequirements(d.handle(), buffer_, &req);
  VkMemoryAllocateInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
  ai.allocationSize = req.size;
  try {
    ai.memoryTypeIndex = d.memory_type(req.memoryTypeBits, host_visible);
    const VkResult r = fn.vkAllocateMemory(d.handle(), &ai, nullptr, &memory_);
    if (r == VK_ERROR_OUT_OF_DEVICE_MEMORY || r == VK_ERROR_OUT_OF_HOST_MEMORY)
      throw sdk::Failure(
          FRUGAL_ERR_OUT_OF_MEMORY,
          what + ": the device cannot allocate " + std::to_string(size) + " bytes (" + result_name(r) + ")");
    check(r, "vkAllocateMemory (" + what + ")");
    check(fn.vkBindBufferMemory(d.handle(), buffer_, memory_, 0), "vkBindBufferMemory (" + what + ")");
    if (host_visible)
      check(fn.vkMapMemory(d.handle(), memory_, 0, VK_WHOLE_SIZE, 0, &mapped_), "vkMapMemory (" + what + ")");
  } catch (...) {
    release();
    throw;
  }
}

Buffer::~Buffer() { release(); }

Buffer::Buffer(Buffer&& o) noexcept { *this = std::move(o); }

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    release();
    std::swap(device_, o.device_);
    std::swap(buffer_, o.buffer_);
    std::swap(memory_, o.memory_);
    std::swap(size_, o.size_);
    std::swap(mapped_, o.mapped_);
  }
  return *this;
}

void Buffer::release() noexcept {
  if (!device_) return;
  const DeviceFunctions& fn = device_->fn();
  if (mapped_) fn.vkUnmapMemory(device_->handle(), memory_);
  if (buffer_) device_->forget_views(buffer_);
  if (buffer_) fn.vkDestroyBuffer(device_->handle(), buffer_, nullptr);
  if (memory_) fn.vkFreeMemory(device_->handle(), memory_, nullptr);
  buffer_ = VK_NULL_HANDLE;
  memory_ = VK_NULL_HANDLE;
  mapped_ = nullptr;
  size_ = 0;
}

// ---- SpecConstants --------------------------------------------------------------

SpecConstants& SpecConstants::set(uint32_t id, uint32_t value) {
  for (auto& e : entries_)
    if (e.first == id) {
      e.second = value;
      return *this;
    }
  entries_.emplace_back(id, value);
  return *this;
}

SpecConstants& SpecConstants::set_int(uint32_t id, int32_t value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return set(id, bits);
}

SpecConstants& SpecConstants::set_float(uint32_t id, float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return set(id, bits);
}

std::string SpecConstants::key() const {
  std::vector<std::pair<uint32_t, uint32_t>> sorted = entries_;
  std::sort(sorted.begin(), sorted.end());
  std::string k;
  for (const auto& e : sorted) k += std::to_string(e.first) + "=" + std::to_string(e.second) + ";";
  return k;
}

// ---- Device ---------------------------------------------------------------------

Device::Device(std::shared_ptr<Instance> instance, const PhysicalDeviceInfo& info,
               const std::string& pipeline_cache)
    : instance_(std::move(instance)), info_(info) {
  const InstanceFunctions& ifn = instance_->fn();
  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qi{};
  qi.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  qi.queueFamilyIndex = uint32_t(info_.compute_queue_family);
  qi.queueCount = 1;
  qi.pQueuePriorities = &priority;
  VkDeviceCreateInfo di{};
  di.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  di.queueCreateInfoCount = 1;
  di.pQueueCreateInfos = &qi;
  check(ifn.vkCreateDevice(info_.handle, &di, nullptr, &device_), "vkCreateDevice (" + info_.name + ")");
  try {
    fn_.load(ifn, device_);
    fn_.vkGetDeviceQueue(device_, uint32_t(info_.compute_queue_family), 0, &queue_);

    VkFenceCreateInfo fi{};
    fi.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
    check(fn_.vkCreateFence(device_, &fi, nullptr, &fence_), "vkCreateFence");
    VkCommandPoolCreateInfo pi{};
    pi.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
    pi.flags = VK_COMMAND_POOL_CREATE_TRANSIENT_BIT | VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
    pi.queueFamilyIndex = uint32_t(info_.compute_queue_family);
    check(fn_.vkCreateCommandPool(device_, &pi, nullptr, &transfer_pool_), "vkCreateCommandPool");

    VkDescriptorSetLayoutBinding bindings[kBindings + kTexelBindings];
    for (uint32_t b = 0; b < kBindings + kTexelBindings; ++b) {
      bindings[b] = VkDescriptorSetLayoutBinding{};
      bindings[b].binding = b;
      bindings[b].descriptorType =
          b < kBindings ? VK_DESCRIPTOR_TYPE_STORAGE_BUFFER : VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
      bindings[b].descriptorCount = 1;
      bindings[b].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
    }
    VkDescriptorSetLayoutCreateInfo li{};
    li.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
    li.bindingCount = kBindings + kTexelBindings;
    li.pBindings = bindings;
    check(fn_.vkCreateDescriptorSetLayout(device_, &li, nullptr, &set_layout_),
          "vkCreateDescriptorSetLayout");
    if (info_.limits.maxPushConstantsSize < kPushConstantBytes)
      throw sdk::Failure(FRUGAL_ERR_UNSUPPORTED, info_.name + " offers " +
                                                     std::to_string(info_.limits.maxPushConstantsSize) +
                                                     " bytes of push constants, frugal's shaders need " +
                                                     std::to_string(kPushConstantBytes));
    VkPushConstantRange pr{VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushConstantBytes};
    VkPipelineLayoutCreateInfo pli{};
    pli.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
    pli.setLayoutCount = 1;
    pli.pSetLayouts = &set_layout_;
    pli.pushConstantRangeCount = 1;
    pli.pPushConstantRanges = &pr;
    check(fn_.vkCreatePipelineLayout(device_, &pli, nullptr, &pipeline_layout_), "vkCreatePipelineLayout");

    const VkDescriptorPoolSize ps[2] = {
        {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kMaxDescriptorSets * kBindings},
        {VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, kMaxDescriptorSets * kTexelBindings}};
    VkDescriptorPoolCreateInfo dpi{};
    dpi.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
    dpi.flags = VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT;
    dpi.maxSets = kMaxDescriptorSets;
    dpi.poolSizeCount = 2;
    dpi.pPoolSizes = ps;
    check(fn_.vkCreateDescriptorPool(device_, &dpi, nullptr, &descriptor_pool_), "vkCreateDescriptorPool");

    // The pipeline cache: this device's file if it is there and was written for it.
    if (pipeline_cache != "off") {
      cache_path_ = pipeline_cache;
      if (cache_path_.empty()) {
        const std::string dir = default_cache_dir();
        if (!dir.empty()) cache_path_ = dir + "/vk-pipeline-" + info_.uuid_hex() + ".bin";
      }
    }
    std::vector<char> blob;
    if (!cache_path_.empty()) {
      std::ifstream f(cache_path_, std::ios::binary);
      if (f) blob.assign(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
      if (!cache_header_matches(blob, info_)) blob.clear();  // absent, stale or another device's
    }
    VkPipelineCacheCreateInfo ci{};
    ci.sType = VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO;
    ci.initialDataSize = blob.size();
    ci.pInitialData = blob.empty() ? nullptr : blob.data();
    check(fn_.vkCreatePipelineCache(device_, &ci, nullptr, &pipeline_cache_), "vkCreatePipelineCache");
    cache_loaded_ = !blob.empty();
    cache_saved_bytes_ = blob.size();

    // Work-group sizes: wide on GPUs, narrower on CPU drivers (lavapipe runs a
    // work group as SIMD lanes of one thread), always within the limits.
    const VkPhysicalDeviceLimits& L = info_.limits;
    wg1d_ = info_.vk_type == VK_PHYSICAL_DEVICE_TYPE_CPU ? 64 : 256;
    wg1d_ = std::min({wg1d_, L.maxComputeWorkGroupInvocations, L.maxComputeWorkGroupSize[0]});
    tile_ = 16;
    while (tile_ > 1 &&
           (tile_ * tile_ > L.maxComputeWorkGroupInvocations || tile_ > L.maxComputeWorkGroupSize[0] ||
            tile_ > L.maxComputeWorkGroupSize[1] || 2 * tile_ * tile_ * 4 > L.maxComputeSharedMemorySize))
      tile_ /= 2;

    dummy_ = Buffer(*this, 256, VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT,
                    false, "dummy binding");
  } catch (...) {
    destroy();
    throw;
  }
}

Device::~Device() { destroy(); }

void Device::destroy() noexcept {
  if (!device_) return;
  if (!fn_.vkDestroyDevice) {  // the driver lacked an entry point: nothing more can be called
    device_ = VK_NULL_HANDLE;
    return;
  }
  fn_.vkDeviceWaitIdle(device_);
  try {
    save_pipeline_cache();
  } catch (const std::exception&) {
    // a cache that cannot be written costs only time at the next start
  }
  staging_ = Buffer();
  dummy_ = Buffer();  // its views go with it; a buffer outliving the device leaves its own
  for (auto& kv : views_) fn_.vkDestroyBufferView(device_, kv.second, nullptr);
  views_.clear();
  for (auto& kv : pipelines_) fn_.vkDestroyPipeline(device_, kv.second, nullptr);
  pipelines_.clear();
  for (auto& kv : modules_) fn_.vkDestroyShaderModule(device_, kv.second, nullptr);
  modules_.clear();
  if (pipeline_cache_) fn_.vkDestroyPipelineCache(device_, pipeline_cache_, nullptr);
  if (descriptor_pool_) fn_.vkDestroyDescriptorPool(device_, descriptor_pool_, nullptr);
  if (pipeline_layout_) fn_.vkDestroyPipelineLayout(device_, pipeline_layout_, nullptr);
  if (set_layout_) fn_.vkDestroyDescriptorSetLayout(device_, set_layout_, nullptr);
  if (transfer_pool_) fn_.vkDestroyCommandPool(device_, transfer_pool_, nullptr);
  if (fence_) fn_.vkDestroyFence(device_, fence_, nullptr);
  fn_.vkDestroyDevice(device_, nullptr);
  device_ = VK_NULL_HANDLE;
}

std::string Device::description() const {
  return info_.name + " (" + info_.type + ", Vulkan " + info_.api_version_string() + ", " + info_.driver +
         ")";
}

uint32_t Device::memory_type(uint32_t type_bits, bool host_visible) const {
  VkPhysicalDeviceMemoryProperties mem{};
  instance_->fn().vkGetPhysicalDeviceMemoryProperties(info_.handle, &mem);
  const VkMemoryPropertyFlags want =
      host_visible ? VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT : 0;
  const VkMemoryPropertyFlags prefer =
      host_visible ? VK_MEMORY_PROPERTY_HOST_CACHED_BIT : VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
  int fallback = -1;
  for (uint32_t i = 0; i < mem.memoryTypeCount; ++i) {
    if (!(type_bits & (1u << i))) continue;
    const VkMemoryPropertyFlags f = mem.memoryTypes[i].propertyFlags;
    if ((f & want) != want) continue;
    if ((f & prefer) == prefer) return i;
    if (fallback < 0) fallback = int(i);
  }
  if (fallback < 0)
    throw sdk::Failure(FRUGAL_ERR_DEVICE, info_.name + " has no " +
                                              (host_visible ? "host-visible coherent" : "") +
                                              " memory type for this buffer");
  return uint32_t(fallback);
}

VkCommandBuffer Device::begin_one_time() {
  VkCommandBufferAllocateInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  ai.commandPool = transfer_pool_;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  check(fn_.vkAllocateCommandBuffers(device_, &ai, &cb), "vkAllocateCommandBuffers");
  VkCommandBufferBeginInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  const VkResult r = fn_.vkBeginCommandBuffer(cb, &bi);
  if (r != VK_SUCCESS) {
    fn_.vkFreeCommandBuffers(device_, transfer_pool_, 1, &cb);
    check(r, "vkBeginCommandBuffer");
  }
  return cb;
}

void Device::submit_and_wait(VkCommandBuffer cb, double timeout_s, Fault fault) {
  submit_and_wait(std::vector<VkCommandBuffer>{cb}, timeout_s, fault);
}

void Device::submit_and_wait(const std::vector<VkCommandBuffer>& cbs, double timeout_s, Fault fault) {
  std::lock_guard<std::recursive_mutex> lock(queue_mutex_);
  if (failed_) throw sdk::Failure(FRUGAL_ERR_DEVICE, failure_);
  Blocker blocker;
  if (fault == Fault::hang) blocker = make_blocker();
  std::vector<VkCommandBuffer> all;
  if (blocker.cb) all.push_back(blocker.cb);
  all.insert(all.end(), cbs.begin(), cbs.end());
  VkSubmitInfo si{};
  si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  si.commandBufferCount = uint32_t(all.size());
  si.pCommandBuffers = all.data();
  VkResult r = fn_.vkResetFences(device_, 1, &fence_);
  if (r == VK_SUCCESS) r = fn_.vkQueueSubmit(queue_, 1, &si, fence_);
  const double ns = std::min(std::max(timeout_s, 0.0) * 1e9, 1.8e19);
  if (r == VK_SUCCESS) {
    // Bounded: a hung device is reported, not waited on forever.
    r = fn_.vkWaitForFences(device_, 1, &fence_, VK_TRUE, uint64_t(ns));
    // The test hook: the work did complete, so nothing is in flight afterwards.
    if (r == VK_SUCCESS && fault == Fault::device_lost) r = VK_ERROR_DEVICE_LOST;
    if (r == VK_SUCCESS && fault == Fault::timeout) r = VK_TIMEOUT;
  }
  if (blocker.cb) release_blocker(blocker, uint64_t(ns));
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%g", timeout_s);
  if (r == VK_ERROR_DEVICE_LOST) {
    failure_ = "the Vulkan device " + info_.name + " was lost (VK_ERROR_DEVICE_LOST): the driver reset it " +
               "or it crashed; nothing more can run on it";
    lost_ = true;
    failed_ = true;
    throw sdk::Failure(FRUGAL_ERR_DEVICE, failure_);
  }
  if (r == VK_TIMEOUT) {
    failure_ = "the Vulkan device " + info_.name + " did not finish a submission within " + seconds +
               " s (option \"timeout_s\"); it is treated as hung and nothing more is submitted to it";
    failed_ = true;
    throw sdk::Failure(FRUGAL_ERR_DEVICE, failure_);
  }
  check(r, "vkQueueSubmit/vkWaitForFences");
}

// The hang hook's first command buffer: it waits for an event nobody sets.
Device::Blocker Device::make_blocker() {
  Blocker b;
  VkEventCreateInfo ei{};
  ei.sType = VK_STRUCTURE_TYPE_EVENT_CREATE_INFO;
  check(fn_.vkCreateEvent(device_, &ei, nullptr, &b.event), "vkCreateEvent");
  b.cb = begin_one_time();
  fn_.vkCmdWaitEvents(b.cb, 1, &b.event, VK_PIPELINE_STAGE_HOST_BIT, VK_PIPELINE_STAGE_ALL_COMMANDS_BIT, 0,
                      nullptr, 0, nullptr, 0, nullptr);
  check(fn_.vkEndCommandBuffer(b.cb), "vkEndCommandBuffer");
  return b;
}

// After the (timed out) wait: lets the queue go on, then frees the blocker.
void Device::release_blocker(Blocker& b, uint64_t timeout_ns) {
  fn_.vkSetEvent(device_, b.event);
  if (fn_.vkWaitForFences(device_, 1, &fence_, VK_TRUE, timeout_ns) == VK_SUCCESS) {
    fn_.vkFreeCommandBuffers(device_, transfer_pool_, 1, &b.cb);
    fn_.vkDestroyEvent(device_, b.event, nullptr);
  }
  b = Blocker{};
}

std::string Device::failure() const { return failed_ ? failure_ : std::string(); }

uint64_t Device::largest_device_heap() const {
  uint64_t local = 0, any = 0;
  for (const HeapInfo& h : info_.heaps) {
    any = std::max(any, h.size);
    if (h.device_local) local = std::max(local, h.size);
  }
  return local ? local : any;
}

const Buffer& Device::staging() {
  std::lock_guard<std::recursive_mutex> lock(queue_mutex_);
  if (!staging_)
    staging_ =
        Buffer(*this, kStagingBytes, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT,
               true, "staging buffer");
  return staging_;
}

void Device::staged_submit(VkCommandBuffer cb, const std::function<void(void*)>& fill,
                           const std::function<void(const void*)>& drain, double timeout_s, Fault fault) {
  std::lock_guard<std::recursive_mutex> lock(queue_mutex_);
  void* mapped = staging().mapped();
  fill(mapped);
  submit_and_wait(cb, timeout_s, fault);
  drain(mapped);
}

void Device::upload(const Buffer& dst, uint64_t offset, const void* src, uint64_t bytes, double timeout_s) {
  std::lock_guard<std::recursive_mutex> lock(queue_mutex_);
  staging();
  const auto* p = static_cast<const unsigned char*>(src);
  for (uint64_t done = 0; done < bytes;) {
    const uint64_t n = std::min(bytes - done, staging_.size());
    std::memcpy(staging_.mapped(), p + done, n);
    run_commands(
        [&](VkCommandBuffer cb) {
          VkBufferCopy c{0, offset + done, n};
          fn_.vkCmdCopyBuffer(cb, staging_.handle(), dst.handle(), 1, &c);
        },
        timeout_s);
    done += n;
  }
}

void Device::download(const Buffer& src, uint64_t offset, void* dst, uint64_t bytes, double timeout_s) {
  std::lock_guard<std::recursive_mutex> lock(queue_mutex_);
  staging();
  auto* p = static_cast<unsigned char*>(dst);
  for (uint64_t done = 0; done < bytes;) {
    const uint64_t n = std::min(bytes - done, staging_.size());
    run_commands(
        [&](VkCommandBuffer cb) {
          VkBufferCopy c{offset + done, 0, n};
          fn_.vkCmdCopyBuffer(cb, src.handle(), staging_.handle(), 1, &c);
        },
        timeout_s);
    std::memcpy(p + done, staging_.mapped(), n);
    done += n;
  }
}

std::vector<uint32_t> Device::read_spirv(const std::string& path) const {
  std::ifstream f(path, std::ios::binary);
  if (!f)
    throw sdk::Failure(FRUGAL_ERR_DEVICE,
                       "shader " + path +
                           " not found (build the frugal_shaders target, or point the "
                           "executor at the SPIR-V folder with option \"shader_dir\" or FRUGAL_SHADER_DIR)");
  std::vector<char> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  if (bytes.size() < 20 || bytes.size() % 4 != 0)
    throw sdk::Failure(FRUGAL_ERR_DEVICE,
                       "shader " + path + " is not SPIR-V (" + std::to_string(bytes.size()) + " bytes)");
  std::vector<uint32_t> words(bytes.size() / 4);
  std::memcpy(words.data(), bytes.data(), bytes.size());
  if (words[0] != 0x07230203u)
    throw sdk::Failure(FRUGAL_ERR_DEVICE, "shader " + path + " is not SPIR-V (bad magic number)");
  return words;
}

VkPipeline Device::pipeline(const std::string& spv, const SpecConstants& spec) {
  std::lock_guard<std::mutex> lock(pipeline_mutex_);
  const std::string key = spv + "|" + spec.key();
  auto it = pipelines_.find(key);
  if (it != pipelines_.end()) return it->second;
  VkShaderModule module = VK_NULL_HANDLE;
  auto m = modules_.find(spv);
  if (m != modules_.end()) {
    module = m->second;
  } else {
    const std::vector<uint32_t> words = read_spirv(spv);
    VkShaderModuleCreateInfo si{};
    si.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
    si.codeSize = words.size() * 4;
    si.pCode = words.data();
    check(fn_.vkCreateShaderModule(device_, &si, nullptr, &module), "vkCreateShaderModule (" + spv + ")");
    modules_[spv] = module;
  }
  std::vector<VkSpecializationMapEntry> map;
  std::vector<uint32_t> data;
  for (const auto& e : spec.entries()) {
    map.push_back(VkSpecializationMapEntry{e.first, uint32_t(data.size() * 4), 4});
    data.push_back(e.second);
  }
  VkSpecializationInfo info{};
  info.mapEntryCount = uint32_t(map.size());
  info.pMapEntries = map.data();
  info.dataSize = data.size() * 4;
  info.pData = data.data();
  VkComputePipelineCreateInfo ci{};
  ci.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
  ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = module;
  ci.stage.pName = "main";
  ci.stage.pSpecializationInfo = map.empty() ? nullptr : &info;
  ci.layout = pipeline_layout_;
  VkPipeline p = VK_NULL_HANDLE;
  check(fn_.vkCreateComputePipelines(device_, pipeline_cache_, 1, &ci, nullptr, &p),
        "vkCreateComputePipelines (" + spv + ")");
  pipelines_[key] = p;
  ++pipelines_built_;
  return p;
}

std::vector<VkDescriptorSet> Device::allocate_sets(uint32_t count) {
  std::vector<VkDescriptorSet> sets(count, VK_NULL_HANDLE);
  if (count == 0) return sets;
  std::lock_guard<std::mutex> lock(pool_mutex_);
  std::vector<VkDescriptorSetLayout> layouts(count, set_layout_);
  VkDescriptorSetAllocateInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
  ai.descriptorPool = descriptor_pool_;
  ai.descriptorSetCount = count;
  ai.pSetLayouts = layouts.data();
  const VkResult r = fn_.vkAllocateDescriptorSets(device_, &ai, sets.data());
  if (r == VK_ERROR_OUT_OF_POOL_MEMORY || r == VK_ERROR_FRAGMENTED_POOL)
    throw sdk::Failure(FRUGAL_ERR_OUT_OF_MEMORY,
                       "the device's descriptor pool (" + std::to_string(kMaxDescriptorSets) +
                           " sets) cannot hold " + std::to_string(count) + " more sets");
  check(r, "vkAllocateDescriptorSets");
  return sets;
}

VkBufferView Device::texel_view(VkBuffer buffer, uint64_t offset, uint64_t bytes, bool scalar) {
  if (buffer == VK_NULL_HANDLE) {
    buffer = dummy_.handle();
    offset = 0;
    bytes = dummy_.size();
  }
  if (offset % texel_alignment() != 0 || bytes % (scalar ? 4 : 16) != 0 || bytes == 0 ||
      bytes > max_texel_bytes(scalar))
    throw Error("internal: a texel view of " + std::to_string(bytes) + " bytes at offset " +
                std::to_string(offset));
  std::lock_guard<std::mutex> lock(view_mutex_);
  const auto key = std::make_tuple(buffer, offset, bytes, scalar);
  const auto it = views_.find(key);
  if (it != views_.end()) return it->second;
  VkBufferViewCreateInfo vi{};
  vi.sType = VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO;
  vi.buffer = buffer;
  vi.format = scalar ? VK_FORMAT_R32_SFLOAT : VK_FORMAT_R32G32B32A32_SFLOAT;  // both mandatory in Vulkan
  vi.offset = offset;
  vi.range = bytes;
  VkBufferView view = VK_NULL_HANDLE;
  check(fn_.vkCreateBufferView(device_, &vi, nullptr, &view), "vkCreateBufferView");
  views_[key] = view;
  return view;
}

void Device::forget_views(VkBuffer buffer) noexcept {
  std::lock_guard<std::mutex> lock(view_mutex_);
  for (auto it = views_.begin(); it != views_.end();) {
    if (std::get<0>(it->first) == buffer) {
      fn_.vkDestroyBufferView(device_, it->second, nullptr);
      it = views_.erase(it);
    } else {
      ++it;
    }
  }
}

void Device::free_sets(std::vector<VkDescriptorSet>& sets) {
  if (sets.empty()) return;
  std::lock_guard<std::mutex> lock(pool_mutex_);
  fn_.vkFreeDescriptorSets(device_, descriptor_pool_, uint32_t(sets.size()), sets.data());
  sets.clear();
}

void Device::save_pipeline_cache() {
  if (cache_path_.empty() || !pipeline_cache_) return;
  std::lock_guard<std::mutex> lock(pipeline_mutex_);
  size_t size = 0;
  check(fn_.vkGetPipelineCacheData(device_, pipeline_cache_, &size, nullptr), "vkGetPipelineCacheData");
  if (size == 0 || size == cache_saved_bytes_) return;  // nothing new since it was read or written
  std::vector<char> data(size);
  check(fn_.vkGetPipelineCacheData(device_, pipeline_cache_, &size, data.data()), "vkGetPipelineCacheData");
  data.resize(size);
  std::error_code ec;
  fs::create_directories(fs::path(cache_path_).parent_path(), ec);
  const std::string tmp = cache_path_ + ".tmp" + std::to_string(uintptr_t(this));
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    if (!f) return;  // an unwritable cache folder only costs time
    f.write(data.data(), std::streamsize(data.size()));
    if (!f) return;
  }
  fs::rename(tmp, cache_path_, ec);  // atomic: concurrent processes never see half a file
  if (ec)
    fs::remove(tmp, ec);
  else
    cache_saved_bytes_ = size;
}

std::shared_ptr<Device> shared_device(const DeviceOptions& options) {
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<Device>> devices;
  std::shared_ptr<Instance> instance = shared_instance(options.validation);
  const PhysicalDeviceInfo info = instance->choose(options.device);
  const std::string key =
      std::to_string(options.validation) + "|" + std::to_string(info.index) + "|" + options.pipeline_cache;
  std::lock_guard<std::mutex> lock(mutex);
  std::shared_ptr<Device> d = devices[key].lock();
  if (!d || !d->failure().empty()) {  // a lost or hung device stays with the executors that saw it
    d = std::make_shared<Device>(instance, info, options.pipeline_cache);
    devices[key] = d;
  }
  return d;
}

}  // namespace frugal::vk
