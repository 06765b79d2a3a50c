#include "arena.h"

#include <cstdlib>
#include <cstring>
#include <new>

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
  for (const exec::OffsetAllocator::Move& m : alloc_.moves())
    std::memmove(base_ + m.to, base_ + m.from, size_t(m.bytes));
  alloc_.clear_moves();
}

}  // namespace frugal::cpu
