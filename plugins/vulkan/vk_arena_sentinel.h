// The test hook FRUGAL_ARENA_SENTINEL (common/arena_sentinel.h) on a device
// buffer: fill it with the sentinel before a run, read back how far the run
// wrote after it.
#pragma once

#include <cstdint>

#include "vk_device.h"

namespace frugal::vk {

void fill_arena_sentinel(Device& d, const Buffer& arena, double timeout_s);
uint64_t arena_touched_bytes(Device& d, const Buffer& arena, double timeout_s);

}  // namespace frugal::vk
