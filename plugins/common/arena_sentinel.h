// Test hook FRUGAL_ARENA_SENTINEL=1 (both executors): the arena's memory is
// allocated kGuardBytes longer than the budget, every byte of it is set to
// kSentinelByte before each run, and the run report gains "touched_bytes": one
// past the highest byte that no longer holds the sentinel. A test can then
// measure, rather than derive, that a run stays inside its budget (touched <=
// budget) and needs all of it (touched == peak).
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace frugal::exec {

constexpr uint64_t kGuardBytes = 4096;
constexpr unsigned char kSentinelByte = 0xA5;

inline bool arena_sentinel_on() {
  static const bool on = [] {
    const char* v = std::getenv("FRUGAL_ARENA_SENTINEL");
    return v && std::strcmp(v, "1") == 0;
  }();
  return on;
}

// Bytes to allocate for an arena of `budget` bytes.
inline uint64_t arena_allocation_bytes(uint64_t budget) {
  return budget + (arena_sentinel_on() ? kGuardBytes : 0);
}

// One past the last byte of p[0, n) that is not the sentinel (0: all are).
inline uint64_t touched_bytes(const unsigned char* p, uint64_t n) {
  while (n > 0 && p[n - 1] == kSentinelByte) --n;
  return n;
}

}  // namespace frugal::exec
