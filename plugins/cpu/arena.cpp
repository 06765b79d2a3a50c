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
  if (capacity > 0) {
    void* p = nullptr;
    if (capacity > SIZE_MAX || posix_memalign(&p, 64, size_t(capacity)) != 0 || !p) throw std::bad_alloc();
    block_.reset(static_cast<unsigned char*>(p));
    base_ = block_.get();
  }
  alloc_.reset(capacity);
}

ChunkMemory::Id Arena::alloc(uint64_t bytes) {
  const Id id = alloc_.alloc(bytes);
  if (!alloc_.moves()
           .empty()) {  // it compacted: slide the contents as listed (ascending, so memmove is safe)
    for (const exec::OffsetAllocator::Move& m : alloc_.moves())
      std::memmove(base_ + m.to, base_ + m.from, size_t(m.bytes));
    alloc_.clear_moves();
  }
  return id;
}

}  // namespace frugal::cpu
