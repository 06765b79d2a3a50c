#include "arena.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <vector>

namespace frugal::cpu {

void Arena::FreeDeleter::operator()(void* p) const { std::free(p); }

void Arena::reset(uint64_t capacity) {
  block_.reset();
  base_ = nullptr;
  alloc_.reset(0);
  block_bytes_ = capacity > 0 ? exec::arena_allocation_bytes(capacity) : 0;
  if (capacity > 0) {
    void* p = nullptr;
    if (block_bytes_ > SIZE_MAX || posix_memalign(&p, 64, size_t(block_bytes_)) != 0 || !p)
      throw std::bad_alloc();
    block_.reset(static_cast<unsigned char*>(p));
    base_ = block_.get();
  }
  alloc_.reset(capacity);
}

void Arena::fill_sentinel() {
  if (base_) std::memset(base_, exec::kSentinelByte, size_t(block_bytes_));
}

uint64_t Arena::touched_bytes() const { return base_ ? exec::touched_bytes(base_, block_bytes_) : 0; }

ChunkMemory::Id Arena::alloc(uint64_t bytes) {
  const Id id = alloc_.alloc(bytes);
  apply_moves();
  return id;
}

ChunkMemory::Id Arena::alloc_after(Id prev, uint64_t bytes) {
  const Id id = alloc_.alloc_after(prev, bytes);
  apply_moves();
  return id;
}

void Arena::apply_moves() {
  if (alloc_.moves().empty()) return;
  const std::chrono::steady_clock::time_point t0 = std::chrono::steady_clock::now();
  for (const exec::OffsetAllocator::Move& m : alloc_.moves())
    std::memmove(base_ + m.to, base_ + m.from, size_t(m.bytes));
  alloc_.clear_moves();
  move_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double Arena::time_slide(uint64_t capacity, int repeats) {
  const uint64_t shift = (capacity / 4) & ~uint64_t(63), bytes = capacity - shift;
  if (capacity > SIZE_MAX / 2 || shift == 0) throw std::bad_alloc();
  // Touched, and warm from the slide before as far as the caches hold it: an
  // arena that fits in the cache moves at its speed, a larger one at memory's.
  std::vector<unsigned char> block(size_t(capacity), 1);
  using clock = std::chrono::steady_clock;
  std::vector<double> times;
  for (int r = 0; r <= repeats; ++r) {  // the first is the warm-up
    const clock::time_point t0 = clock::now();
    std::memmove(block.data(), block.data() + shift, size_t(bytes));
    const double s = std::chrono::duration<double>(clock::now() - t0).count();
    if (r > 0) times.push_back(s / double(bytes));
  }
  std::nth_element(times.begin(), times.begin() + long(times.size() / 2), times.end());
  return times[times.size() / 2];
}

}  // namespace frugal::cpu
