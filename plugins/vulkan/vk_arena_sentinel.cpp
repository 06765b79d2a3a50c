#include "vk_arena_sentinel.h"

#include <vector>

#include "common/arena_sentinel.h"

namespace frugal::vk {

void fill_arena_sentinel(Device& d, const Buffer& arena, double timeout_s) {
  if (!arena) return;
  const uint32_t word = 0x01010101u * exec::kSentinelByte;
  d.run_commands(
      [&](VkCommandBuffer cb) { d.fn().vkCmdFillBuffer(cb, arena.handle(), 0, VK_WHOLE_SIZE, word); },
      timeout_s);
}

uint64_t arena_touched_bytes(Device& d, const Buffer& arena, double timeout_s) {
  if (!arena) return 0;
  std::vector<unsigned char> bytes(arena.size());
  d.download(arena, 0, bytes.data(), bytes.size(), timeout_s);
  return exec::touched_bytes(bytes.data(), bytes.size());
}

}  // namespace frugal::vk
