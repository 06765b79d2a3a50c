#include "vk_recorder.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "common/chunk_memory.h"
#include "frugal/error.h"
#include "frugal/plugin_sdk.hpp"

namespace frugal::vk {

Recorder::Recorder(Device& d, VkCommandBuffer cb, std::vector<VkDescriptorSet>& sets,
                   uint64_t max_binding_bytes)
    : d_(d),
      cb_(cb),
      sets_(sets),
      max_binding_(std::min<uint64_t>(max_binding_bytes, d.max_binding_bytes())) {
  const char* e = std::getenv("FRUGAL_VULKAN_DISPATCHES");
  log_ = e && *e && std::string(e) != "0";
}

void Recorder::log(const std::string& groups, uint64_t total) {
  if (log_)
    std::fprintf(stderr, "dispatch  %-48s %14s %7llu groups  %s\n", label_.c_str(), groups.c_str(),
                 static_cast<unsigned long long>(total), note_.c_str());
}

uint64_t Recorder::window_bytes(const Region& r) const {
  const uint64_t align = d_.binding_alignment();
  return r.bytes + (r.offset % align);
}

void Recorder::bind(VkPipeline pipeline, const Bindings& b, PushConstants& pc, const std::string& what) {
  const uint64_t align = d_.binding_alignment();
  VkDescriptorBufferInfo infos[Device::kBindings];
  uint32_t* offsets[Device::kBindings] = {&pc.x_off, &pc.y_off, &pc.z_off, &pc.o_off, &pc.w_off, &pc.u_off};
  for (uint32_t i = 0; i < Device::kBindings; ++i) {
    const Region& r = b.slot[i];
    if (r.empty() || r.bytes == 0) {
      infos[i] = VkDescriptorBufferInfo{d_.dummy().handle(), 0, d_.dummy().size()};
      *offsets[i] = 0;
      continue;
    }
    if (r.offset % 4 != 0)
      throw Error("internal: " + what + ": operand offset " + std::to_string(r.offset) +
                  " is not 4-byte aligned");
    const uint64_t start = r.offset - r.offset % align;
    const uint64_t range = r.offset + r.bytes - start;
    if (range > max_binding_)
      throw sdk::Failure(FRUGAL_ERR_UNSUPPORTED,
                         what + ": an operand of " + std::to_string(r.bytes) +
                             " bytes does not fit one storage-buffer binding of this device (" +
                             std::to_string(max_binding_) + " bytes, maxStorageBufferRange)");
    infos[i] = VkDescriptorBufferInfo{r.buffer, start, range};
    *offsets[i] = uint32_t((r.offset - start) / 4);
  }
  VkBufferView views[Device::kTexelBindings];
  uint32_t* texel_offsets[Device::kTexelBindings] = {&pc.tx_off, &pc.tw_off};
  for (uint32_t i = 0; i < Device::kTexelBindings; ++i)
    views[i] = texel_view(b.texel[i], b.scalar[i], *texel_offsets[i], what);
  label_ = what;
  note_.clear();
  VkDescriptorSet set = d_.allocate_sets(1)[0];
  sets_.push_back(set);
  VkWriteDescriptorSet writes[Device::kBindings + Device::kTexelBindings];
  for (uint32_t i = 0; i < Device::kBindings + Device::kTexelBindings; ++i) {
    writes[i] = VkWriteDescriptorSet{};
    writes[i].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    writes[i].dstSet = set;
    writes[i].dstBinding = i;
    writes[i].descriptorCount = 1;
    if (i < Device::kBindings) {
      writes[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      writes[i].pBufferInfo = &infos[i];
    } else {
      writes[i].descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
      writes[i].pTexelBufferView = &views[i - Device::kBindings];
    }
  }
  const DeviceFunctions& fn = d_.fn();
  fn.vkUpdateDescriptorSets(d_.handle(), Device::kBindings + Device::kTexelBindings, writes, 0, nullptr);
  fn.vkCmdBindPipeline(cb_, VK_PIPELINE_BIND_POINT_COMPUTE, pipeline);
  fn.vkCmdBindDescriptorSets(cb_, VK_PIPELINE_BIND_POINT_COMPUTE, d_.pipeline_layout(), 0, 1, &set, 0,
                             nullptr);
  push(pc);
}

VkBufferView Recorder::texel_view(const Region& r, bool scalar, uint32_t& texel_offset,
                                  const std::string& what) const {
  texel_offset = 0;
  if (r.empty() || r.bytes == 0) return d_.texel_view(VK_NULL_HANDLE, 0, 0);
  const uint64_t texel = scalar ? 4 : 16;
  if (r.offset % texel != 0 || r.bytes % texel != 0)
    throw Error("internal: " + what + ": a texel operand of " + std::to_string(r.bytes) +
                " bytes at offset " + std::to_string(r.offset) + " is not whole " + std::to_string(texel) +
                "-byte texels");
  const uint64_t start = r.offset - r.offset % d_.texel_alignment();
  const uint64_t range = r.offset + r.bytes - start;
  if (range > d_.max_texel_bytes(scalar))
    throw sdk::Failure(FRUGAL_ERR_UNSUPPORTED, what + ": an operand of " + std::to_string(r.bytes) +
                                                   " bytes does not fit one texel buffer of this device (" +
                                                   std::to_string(d_.max_texel_bytes(scalar)) +
                                                   " bytes, maxTexelBufferElements)");
  texel_offset = uint32_t((r.offset - start) / texel);
  return d_.texel_view(r.buffer, start, range, scalar);
}

void Recorder::push(const PushConstants& pc) {
  d_.fn().vkCmdPushConstants(cb_, d_.pipeline_layout(), VK_SHADER_STAGE_COMPUTE_BIT, 0, sizeof pc, &pc);
}

void Recorder::dispatch(uint32_t x, uint32_t y, uint32_t z) {
  if (x == 0 || y == 0 || z == 0) return;
  for (int a = 0; a < 3; ++a) {
    const uint32_t v = a == 0 ? x : a == 1 ? y : z;
    if (v > d_.max_group_count(a))
      throw sdk::Failure(FRUGAL_ERR_UNSUPPORTED, "a dispatch of " + std::to_string(v) +
                                                     " work groups along axis " + std::to_string(a) +
                                                     " exceeds the device's limit of " +
                                                     std::to_string(d_.max_group_count(a)));
  }
  log(std::to_string(x) + "x" + std::to_string(y) + "x" + std::to_string(z), uint64_t(x) * y * z);
  d_.fn().vkCmdDispatch(cb_, x, y, z);
}

void Recorder::dispatch_flat(uint64_t invocations, uint32_t group_size) {
  const uint64_t groups = (invocations + group_size - 1) / group_size;
  if (groups == 0) return;
  const uint64_t x = std::min<uint64_t>(groups, d_.max_group_count(0));
  const uint64_t y = (groups + x - 1) / x;
  if (y > d_.max_group_count(1))
    throw sdk::Failure(FRUGAL_ERR_UNSUPPORTED, "a dispatch of " + std::to_string(invocations) +
                                                   " invocations exceeds the device's grid");
  dispatch(uint32_t(x), uint32_t(y), 1);
}

void Recorder::dispatch_indirect(VkBuffer buffer, uint64_t offset, const uint32_t* known) {
  if (known)
    log(std::to_string(known[0]) + "x" + std::to_string(known[1]) + "x" + std::to_string(known[2]),
        uint64_t(known[0]) * known[1] * known[2]);
  else
    log("indirect", 0);
  d_.fn().vkCmdDispatchIndirect(cb_, buffer, offset);
}

void Recorder::barrier() {
  VkMemoryBarrier mb{};
  mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT |
                     VK_ACCESS_TRANSFER_READ_BIT;
  mb.dstAccessMask = VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT |
                     VK_ACCESS_INDIRECT_COMMAND_READ_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                     VK_ACCESS_TRANSFER_WRITE_BIT;
  const VkPipelineStageFlags stages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
  d_.fn().vkCmdPipelineBarrier(cb_, stages, stages | VK_PIPELINE_STAGE_DRAW_INDIRECT_BIT, 0, 1, &mb, 0,
                               nullptr, 0, nullptr);
}

void Recorder::host_read_barrier() {
  VkMemoryBarrier mb{};
  mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  mb.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = VK_ACCESS_HOST_READ_BIT;
  d_.fn().vkCmdPipelineBarrier(cb_, VK_PIPELINE_STAGE_TRANSFER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0,
                               nullptr, 0, nullptr);
}

void Recorder::fill(const Region& r, uint32_t value) {
  if (r.bytes == 0) return;
  d_.fn().vkCmdFillBuffer(cb_, r.buffer, r.offset, r.bytes, value);
}

void Recorder::copy(const Region& from, const Region& to) {
  if (from.bytes == 0) return;
  VkBufferCopy c{from.offset, to.offset, from.bytes};
  d_.fn().vkCmdCopyBuffer(cb_, from.buffer, to.buffer, 1, &c);
}

void Recorder::move(VkBuffer buffer, uint64_t from, uint64_t to, uint64_t bytes) {
  for (const exec::OffsetAllocator::Move& p :
       exec::non_overlapping_pieces(exec::OffsetAllocator::Move{from, to, bytes})) {
    copy(Region{buffer, p.from, p.bytes}, Region{buffer, p.to, p.bytes});
    barrier();  // the next piece overwrites what this one read
  }
}

void Recorder::timestamp(VkQueryPool pool, uint32_t query, VkPipelineStageFlagBits stage) {
  d_.fn().vkCmdWriteTimestamp(cb_, stage, pool, query);
}

}  // namespace frugal::vk
