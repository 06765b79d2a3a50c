// Recording compute work into a command buffer: each dispatch binds a pipeline
// and a fresh descriptor set whose six storage bindings are windows onto device
// buffers (a window starts at the operand's offset rounded down to the device's
// minStorageBufferOffsetAlignment; the remainder goes into the push constants)
// and whose two texel bindings are views (aligned the same way, to
// minTexelBufferOffsetAlignment),
// then dispatches directly, as a flat 1-D grid folded to fit the group-count
// limits, or indirectly. The descriptor sets live as long as the Recording.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vk_device.h"

namespace frugal::vk {

// A byte range of a device buffer; an empty Region binds the device's dummy buffer.
struct Region {
  VkBuffer buffer = VK_NULL_HANDLE;
  uint64_t offset = 0, bytes = 0;
  bool empty() const { return buffer == VK_NULL_HANDLE; }
  // The sub-range [offset + at, offset + at + bytes).
  Region sub(uint64_t at, uint64_t n) const { return Region{buffer, offset + at, n}; }
};

// Mirrors `pc` in shaders/common.glsl.
struct PushConstants {
  uint32_t x_off = 0, y_off = 0, z_off = 0, o_off = 0, w_off = 0, u_off = 0;
  uint32_t n = 0, s = 0;
  uint32_t p0 = 0, p1 = 0, p2 = 0, p3 = 0;
  uint32_t tx_off = 0, tw_off = 0;  // texel offsets inside the texel views
};
static_assert(sizeof(PushConstants) == Device::kPushConstantBytes, "push constants must match common.glsl");

enum Slot { kX = 0, kY = 1, kZ = 2, kO = 3, kW = 4, kU = 5 };

// texel[0], texel[1]: operands read as RGBA32F texels (bindings tx, tw); each
// must start at a multiple of 16 bytes and hold whole texels; or, scalar, as
// R32F texels.
struct Bindings {
  Region slot[Device::kBindings];
  Region texel[Device::kTexelBindings];
  bool scalar[Device::kTexelBindings] = {};
};

class Recorder {
 public:
  // Records into `cb` (begun by the caller); the descriptor sets it allocates
  // are appended to `sets`, which the caller frees after the work completed.
  // max_binding_bytes: the largest window (<= the device's maxStorageBufferRange).
  Recorder(Device& d, VkCommandBuffer cb, std::vector<VkDescriptorSet>& sets, uint64_t max_binding_bytes);

  Device& device() const { return d_; }
  uint64_t max_binding_bytes() const { return max_binding_; }
  // Bytes a window for `r` takes (alignment slack included).
  uint64_t window_bytes(const Region& r) const;

  // Binds `pipeline` and a new descriptor set for `b`; sets pc.*_off to the
  // operands' element offsets inside their windows and pushes pc. Throws
  // sdk::Failure(FRUGAL_ERR_UNSUPPORTED) naming `what` when a window exceeds the limit.
  void bind(VkPipeline pipeline, const Bindings& b, PushConstants& pc, const std::string& what);
  // Pushes new constants for the pipeline bound last (same windows).
  void push(const PushConstants& pc);

  void dispatch(uint32_t x, uint32_t y, uint32_t z);
  // ceil(invocations / group_size) groups of a 1-D shader using flat_index().
  void dispatch_flat(uint64_t invocations, uint32_t group_size);
  // known: the group counts when the host knows them (only for the dispatch log).
  void dispatch_indirect(VkBuffer buffer, uint64_t offset, const uint32_t* known = nullptr);
  // With env FRUGAL_VULKAN_DISPATCHES=1 every dispatch is printed on stderr
  // (the label of its bind, its work groups, and this note, which holds until
  // the next bind: e.g. a conv's reduction length per work group).
  void note(const std::string& text) { note_ = text; }

  // Makes every earlier shader or transfer write visible to later reads and
  // indirect-argument fetches, and orders later writes after earlier reads.
  void barrier();
  // Transfers before it visible to the host once the submission has finished.
  void host_read_barrier();
  void fill(const Region& r, uint32_t value);
  void copy(const Region& from, const Region& to);
  // Moves `bytes` bytes of `buffer` from offset `from` to `to`, as the arena's
  // allocator does. Vulkan forbids overlapping source and destination in a
  // copy, so a slide is copied in pieces no longer than the shift (lowest first
  // down, highest first up) with a barrier after each (the next piece
  // overwrites what this one read).
  void move(VkBuffer buffer, uint64_t from, uint64_t to, uint64_t bytes);
  void timestamp(VkQueryPool pool, uint32_t query, VkPipelineStageFlagBits stage);

 private:
  Device& d_;
  VkCommandBuffer cb_;
  std::vector<VkDescriptorSet>& sets_;
  uint64_t max_binding_;
  bool log_ = false;
  std::string label_, note_;
  void log(const std::string& groups, uint64_t total);
  // The view for a texel operand (the dummy's when empty), its texel offset in it.
  VkBufferView texel_view(const Region& r, bool scalar, uint32_t& texel_offset,
                          const std::string& what) const;
};

}  // namespace frugal::vk
