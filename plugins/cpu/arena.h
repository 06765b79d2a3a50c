// The executor's memory arena: ONE block of exactly the budget, carved into
// chunks by the compacting offset allocator both executors share
// (plugins/common/chunk_memory.h). Chunk sizes are exact, so the live bytes the
// arena measures are exactly the bytes of the chunks held. When the allocator
// compacts or makes room behind a chunk, the arena moves the chunks' contents
// (memmove) as it lists them. Chunks are named by ids; their addresses change on compaction, so
// callers look addresses up (data()) after their last allocation.
#pragma once

#include <cstdint>
#include <memory>

#include "common/arena_sentinel.h"
#include "common/chunk_memory.h"

namespace frugal::cpu {

using exec::ChunkMemory;
using exec::CountingMemory;

class Arena : public ChunkMemory {
 public:
  Arena() = default;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  // (Re)allocates the block: exactly `capacity` bytes; drops every chunk.
  // Throws std::bad_alloc when the system has no such block.
  void reset(uint64_t capacity);
  uint64_t capacity() const { return alloc_.capacity(); }
  bool has_block() const { return base_ != nullptr || capacity() == 0; }

  // Throws frugal::Error when live + bytes > capacity.
  Id alloc(uint64_t bytes) override;
  Id alloc_after(Id prev, uint64_t bytes) override;
  void merge(Id head, Id tail) override { alloc_.merge(head, tail); }
  void release(Id id) override { alloc_.release(id); }
  Id split(Id id, uint64_t at) override { return alloc_.split(id, at); }
  uint64_t live_bytes() const override { return alloc_.live_bytes(); }
  uint64_t peak_bytes() const override { return alloc_.peak_bytes(); }

  float* data(Id id) const {
    return alloc_.size(id) == 0 ? nullptr : reinterpret_cast<float*>(base_ + alloc_.offset(id));
  }
  uint64_t size(Id id) const { return alloc_.size(id); }
  uint64_t offset(Id id) const { return alloc_.offset(id); }

  // Drops every chunk and restarts the peak and move counters.
  void clear() { alloc_.clear(); }
  uint64_t compactions() const { return alloc_.compactions(); }
  uint64_t moved_bytes() const { return alloc_.moved_bytes(); }
  // Seconds spent moving chunks' contents since the block was made (the run report's per-step
  // "move_seconds").
  double move_seconds() const { return move_seconds_; }
  // Checks the internal invariants (tests): chunks inside the block, disjoint,
  // live bytes equal to their sum.
  void check() const { alloc_.check(); }
  // Test hook FRUGAL_ARENA_SENTINEL (common/arena_sentinel.h): the whole block,
  // guard included, set to the sentinel; one past the last byte written since.
  void fill_sentinel();
  uint64_t touched_bytes() const;

  // Median seconds per byte of `repeats` slides (memmove, as apply_moves does)
  // of three quarters of a block of `capacity` bytes down by the rest, after a
  // warm-up: what a moved byte costs in an arena of that size (docs/COSTS.md, "Moves").
  static double time_slide(uint64_t capacity, int repeats);

 private:
  struct FreeDeleter {
    void operator()(void* p) const;
  };
  // Moves the contents as the allocator listed (in order; memmove handles each slide).
  void apply_moves();
  exec::OffsetAllocator alloc_;
  std::unique_ptr<unsigned char, FreeDeleter> block_;
  unsigned char* base_ = nullptr;
  uint64_t block_bytes_ = 0;  // capacity, plus the sentinel hook's guard
  double move_seconds_ = 0;
};

}  // namespace frugal::cpu
