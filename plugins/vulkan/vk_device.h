// One Vulkan logical device with what every executor on it shares: the compute
// queue, ONE descriptor pool, ONE pipeline cache (loaded from and saved to disk,
// so the second start skips shader compilation), the pipelines built so far,
// one reusable staging buffer for uploads and downloads, and the workgroup
// sizes chosen from the device's limits. Executors of one process on the same
// device share it (shared_device()).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "vk_api.h"
#include "vk_instance.h"

namespace frugal::vk {

class Device;

// A buffer with its own memory. Host-visible buffers stay mapped.
class Buffer {
 public:
  Buffer() = default;
  // Throws sdk::Failure(FRUGAL_ERR_OUT_OF_MEMORY) naming `what` when the device
  // cannot allocate it. size must be > 0.
  Buffer(Device& d, uint64_t size, VkBufferUsageFlags usage, bool host_visible, const std::string& what);
  ~Buffer();
  Buffer(Buffer&& o) noexcept;
  Buffer& operator=(Buffer&& o) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  VkBuffer handle() const { return buffer_; }
  uint64_t size() const { return size_; }
  void* mapped() const { return mapped_; }
  explicit operator bool() const { return buffer_ != VK_NULL_HANDLE; }

 private:
  void release() noexcept;
  Device* device_ = nullptr;
  VkBuffer buffer_ = VK_NULL_HANDLE;
  VkDeviceMemory memory_ = VK_NULL_HANDLE;
  uint64_t size_ = 0;
  void* mapped_ = nullptr;
};

// Specialization constants of one pipeline: (constant_id, 32-bit value) pairs.
class SpecConstants {
 public:
  SpecConstants& set(uint32_t id, uint32_t value);
  SpecConstants& set_int(uint32_t id, int32_t value);
  SpecConstants& set_float(uint32_t id, float value);
  const std::vector<std::pair<uint32_t, uint32_t>>& entries() const { return entries_; }
  std::string key() const;

 private:
  std::vector<std::pair<uint32_t, uint32_t>> entries_;
};

// Work-group limits (maxComputeWorkGroupInvocations, maxComputeWorkGroupSize x
// and y, maxComputeSharedMemorySize); the defaults are Vulkan's guaranteed minimums.
// min_groups: a GEMM-shaped conv whose dispatch has fewer work groups splits
// its reduction until it has about this many (0: never; the executor's choice).
// long_step: the reduction depth a tiled conv stages per barrier where its
// reduction is long (the executor's choice; shorter ones stage 8).
struct TileLimits {
  uint32_t invocations = 128, size_x = 128, size_y = 128, shared_bytes = 16384;
  uint32_t max_groups_x = 65535;  // maxComputeWorkGroupCount[0]
  uint32_t max_texels = 65536;    // maxTexelBufferElements
  uint32_t min_groups = 0;
  uint32_t long_step = 8;
  // Gate passes with one invocation per plane or kernel (FLAT; the executor's
  // option gate_passes, by default on CPU devices, where a barrier costs more
  // than the parallelism a work group per item gives).
  bool flat_gate_passes = false;
};

struct DeviceOptions {
  int device = -1;  // -1: FRUGAL_VULKAN_DEVICE, else the best by type
  bool validation = false;
  std::string pipeline_cache;  // file; "" = $XDG_CACHE_HOME/frugal/vk-pipeline-<uuid>.bin; "off" = none
};

// A fault for submit_and_wait (test hook, env FRUGAL_VULKAN_FAULT; see
// Executor::run). device_lost and timeout are pretended: the submission runs
// and completes for real, then its fence wait reports VK_ERROR_DEVICE_LOST or
// VK_TIMEOUT, so every path after a lost or hung device is exercised on a
// driver that cannot lose its device. hang is real: the submission first waits
// on an event nobody sets, so its fence does not signal and the bounded wait
// times out; only then is the event set, so that the queue drains (a really
// hung device stays hung).
enum class Fault { none, device_lost, timeout, hang };

// How long a fence wait lasts before it is reported as a timeout, unless the
// executor says otherwise (option "timeout_s").
constexpr double kDefaultWaitSeconds = 120.0;

class Device {
 public:
  Device(std::shared_ptr<Instance> instance, const PhysicalDeviceInfo& info,
         const std::string& pipeline_cache);
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const DeviceFunctions& fn() const { return fn_; }
  VkDevice handle() const { return device_; }
  const PhysicalDeviceInfo& info() const { return info_; }
  Instance& instance() const { return *instance_; }
  std::string description() const;  // "llvmpipe (LLVM 15.0.6, 256 bits) (cpu, Vulkan 1.3.230, llvmpipe ...)"

  // Memory type for a buffer: device-local (or, host_visible, host-visible and coherent).
  uint32_t memory_type(uint32_t type_bits, bool host_visible) const;

  // Records with `record(cb)` into a one-time command buffer, submits and waits.
  template <class F>
  void run_commands(F&& record, double timeout_s = kDefaultWaitSeconds);
  // Submits a recorded command buffer on the queue and waits for it, at most
  // timeout_s. A lost device (VK_ERROR_DEVICE_LOST) or a wait that times out
  // marks the device failed (failure()) and throws sdk::Failure(FRUGAL_ERR_DEVICE)
  // saying which; a failed device refuses every later submission the same way.
  void submit_and_wait(VkCommandBuffer cb, double timeout_s = kDefaultWaitSeconds, Fault fault = Fault::none);
  // The same for several command buffers in one submission, in order (one
  // recorded with VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT may repeat).
  void submit_and_wait(const std::vector<VkCommandBuffer>& cbs, double timeout_s = kDefaultWaitSeconds,
                       Fault fault = Fault::none);

  // Why the device can no longer be used ("" while it can): lost, or a
  // submission that did not finish in time. shared_device() then makes a new one.
  std::string failure() const;
  bool lost() const { return lost_; }  // failed with VK_ERROR_DEVICE_LOST (not a timeout)

  // Copies through the staging buffer (in pieces when larger than it).
  void upload(const Buffer& dst, uint64_t offset, const void* src, uint64_t bytes,
              double timeout_s = kDefaultWaitSeconds);
  void download(const Buffer& src, uint64_t offset, void* dst, uint64_t bytes,
                double timeout_s = kDefaultWaitSeconds);

  // The staging buffer (made on first use; it lives as long as the device), for
  // command buffers that copy through it themselves. Only while staged_submit
  // holds the queue may its contents be relied on.
  const Buffer& staging();
  // Under the queue's lock: fill(staging's mapped memory), submit `cb` and wait,
  // drain(the mapped memory). A run's inputs, kernels and outputs in one submission.
  void staged_submit(VkCommandBuffer cb, const std::function<void(void*)>& fill,
                     const std::function<void(const void*)>& drain, double timeout_s, Fault fault);

  // The largest device-local memory heap (the largest heap when none is
  // device-local): no single buffer, the arena included, can be larger.
  uint64_t largest_device_heap() const;

  // The descriptor-set layout and pipeline layout every frugal shader uses:
  // 6 storage buffers (x, y, z, o, w, u), then 2 uniform texel buffers (tx, tw:
  // RGBA32F views, for kernels that fetch their operands as texels), and
  // kPushConstantBytes of push constants.
  VkDescriptorSetLayout set_layout() const { return set_layout_; }
  VkPipelineLayout pipeline_layout() const { return pipeline_layout_; }
  static constexpr uint32_t kBindings = 6;
  static constexpr uint32_t kTexelBindings = 2;
  static constexpr uint32_t kPushConstantBytes = 56;

  // A view of bytes [offset, offset + bytes) of `buffer` as RGBA32F texels (or
  // R32F with scalar; offset a multiple of texel_alignment(), bytes of the
  // texel's size), made once and kept until the buffer is released; a null
  // buffer gives a view of the dummy buffer.
  VkBufferView texel_view(VkBuffer buffer, uint64_t offset, uint64_t bytes, bool scalar = false);
  uint64_t texel_alignment() const {
    return std::max<uint64_t>(16, info_.limits.minTexelBufferOffsetAlignment);
  }
  uint64_t max_texel_bytes(bool scalar = false) const {
    return uint64_t(info_.limits.maxTexelBufferElements) * (scalar ? 4 : 16);
  }

  // The pipeline of SPIR-V file `spv` with these constants (built once, through
  // the pipeline cache). Throws naming the file when it is missing or invalid.
  VkPipeline pipeline(const std::string& spv, const SpecConstants& spec);
  // Pipelines compiled by this process so far (not found in memory).
  uint64_t pipelines_built() const { return pipelines_built_; }

  // Descriptor sets from the device's one pool; freed with free_sets.
  std::vector<VkDescriptorSet> allocate_sets(uint32_t count);
  void free_sets(std::vector<VkDescriptorSet>& sets);

  // A small buffer bound where a shader does not use a binding.
  const Buffer& dummy() const { return dummy_; }

  // Limits that shape dispatches.
  uint32_t workgroup_1d() const { return wg1d_; }  // invocations of 1-D work groups
  uint32_t matmul_tile() const { return tile_; }   // TILE x TILE work groups
  // The limits a 2-D tiled shader's work group must fit.
  TileLimits tile_limits() const {
    const VkPhysicalDeviceLimits& L = info_.limits;
    return TileLimits{L.maxComputeWorkGroupInvocations, L.maxComputeWorkGroupSize[0],
                      L.maxComputeWorkGroupSize[1],     L.maxComputeSharedMemorySize,
                      L.maxComputeWorkGroupCount[0],    L.maxTexelBufferElements};
  }
  uint64_t binding_alignment() const { return info_.limits.minStorageBufferOffsetAlignment; }
  uint64_t max_binding_bytes() const { return info_.limits.maxStorageBufferRange; }
  uint32_t max_group_count(int axis) const { return info_.limits.maxComputeWorkGroupCount[axis]; }
  bool has_timestamps() const { return info_.timestamp_valid_bits > 0; }
  double timestamp_period_ns() const { return info_.limits.timestampPeriod; }

  // The pipeline cache file ("" when off), whether it was read at start, and saving it.
  const std::string& pipeline_cache_path() const { return cache_path_; }
  bool pipeline_cache_loaded() const { return cache_loaded_; }
  void save_pipeline_cache();

 private:
  void destroy() noexcept;  // idempotent: the destructor, and cleanup of a failed constructor
  VkCommandBuffer begin_one_time();
  struct Blocker {  // Fault::hang
    VkEvent event = VK_NULL_HANDLE;
    VkCommandBuffer cb = VK_NULL_HANDLE;
  };
  Blocker make_blocker();
  void release_blocker(Blocker& b, uint64_t timeout_ns);
  std::vector<uint32_t> read_spirv(const std::string& path) const;

  std::shared_ptr<Instance> instance_;
  PhysicalDeviceInfo info_;
  DeviceFunctions fn_;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  VkCommandPool transfer_pool_ = VK_NULL_HANDLE;
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout pipeline_layout_ = VK_NULL_HANDLE;
  VkDescriptorPool descriptor_pool_ = VK_NULL_HANDLE;
  VkPipelineCache pipeline_cache_ = VK_NULL_HANDLE;
  std::string cache_path_;
  bool cache_loaded_ = false;
  size_t cache_saved_bytes_ = 0;
  std::map<std::string, VkPipeline> pipelines_;
  std::map<std::string, VkShaderModule> modules_;
  uint64_t pipelines_built_ = 0;
  Buffer staging_;
  Buffer dummy_;
  std::map<std::tuple<VkBuffer, uint64_t, uint64_t, bool>, VkBufferView> views_;
  void forget_views(VkBuffer buffer) noexcept;  // Buffer::release, before the buffer goes
  uint32_t wg1d_ = 64, tile_ = 16;

  std::atomic<bool> failed_{false}, lost_{false};
  std::string failure_;  // set once, under queue_mutex_, before failed_

  std::recursive_mutex queue_mutex_;  // the queue, fence and transfer pool
  std::mutex pipeline_mutex_;
  std::mutex pool_mutex_;
  std::mutex view_mutex_;
  friend class Buffer;
};

// The device for these options, shared by the process's executors (created on
// first use). Throws sdk::Failure(FRUGAL_ERR_DEVICE) when there is none.
std::shared_ptr<Device> shared_device(const DeviceOptions& options);

template <class F>
void Device::run_commands(F&& record, double timeout_s) {
  std::lock_guard<std::recursive_mutex> lock(queue_mutex_);
  VkCommandBuffer cb = begin_one_time();
  struct Free {
    Device* d;
    VkCommandBuffer cb;
    ~Free() { d->fn_.vkFreeCommandBuffers(d->device_, d->transfer_pool_, 1, &cb); }
  } free_cb{this, cb};
  record(cb);
  check(fn_.vkEndCommandBuffer(cb), "vkEndCommandBuffer");
  submit_and_wait(cb, timeout_s);
}

}  // namespace frugal::vk
