// The executor's memory arena: ONE block of exactly the budget, carved into
// chunks. Chunk sizes are exact (no rounding, no headers), so the live bytes the
// arena measures are exactly the bytes of the chunks held. When no hole is big
// enough but the free bytes in total are, the arena compacts: it slides every
// live chunk down (memmove, contents preserved) so the free space becomes one
// block at the top. Any set of chunks whose sizes sum to <= capacity therefore
// fits. Chunks are named by ids; their addresses change on compaction, so
// callers look addresses up (data()) after their last allocation.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

namespace frugal::cpu {

// The allocation interface shared by the arena and the memory simulation of a plan.
class ChunkMemory {
 public:
  using Id = uint32_t;
  virtual ~ChunkMemory() = default;
  virtual Id alloc(uint64_t bytes) = 0;
  virtual void release(Id id) = 0;
  // Splits chunk `id` at byte `at`: `id` keeps [0, at), the returned id gets the rest.
  virtual Id split(Id id, uint64_t at) = 0;
  virtual uint64_t live_bytes() const = 0;
  virtual uint64_t peak_bytes() const = 0;
};

// Counts bytes only: the plan simulation.
class CountingMemory : public ChunkMemory {
 public:
  Id alloc(uint64_t bytes) override;
  void release(Id id) override;
  Id split(Id id, uint64_t at) override;
  uint64_t live_bytes() const override { return live_; }
  uint64_t peak_bytes() const override { return peak_; }

 private:
  std::vector<uint64_t> sizes_;
  std::vector<bool> used_;
  uint64_t live_ = 0, peak_ = 0;
};

class Arena : public ChunkMemory {
 public:
  Arena() = default;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  // (Re)allocates the block: exactly `capacity` bytes; drops every chunk.
  // Throws std::bad_alloc when the system has no such block.
  void reset(uint64_t capacity);
  uint64_t capacity() const { return capacity_; }
  bool has_block() const { return base_ != nullptr || capacity_ == 0; }

  // Throws frugal::Error when live + bytes > capacity.
  Id alloc(uint64_t bytes) override;
  void release(Id id) override;
  Id split(Id id, uint64_t at) override;
  uint64_t live_bytes() const override { return live_; }
  uint64_t peak_bytes() const override { return peak_; }

  float* data(Id id) const;
  uint64_t size(Id id) const { return chunks_[id].size; }
  uint64_t offset(Id id) const { return chunks_[id].offset; }

  // Drops every chunk and restarts the peak and move counters.
  void clear();
  uint64_t compactions() const { return compactions_; }
  uint64_t moved_bytes() const { return moved_bytes_; }
  // Checks the internal invariants (tests): chunks inside the block, disjoint,
  // live bytes equal to their sum.
  void check() const;

 private:
  struct Chunk {
    uint64_t offset = 0, size = 0;
    bool used = false;
  };
  Id new_id();
  void compact();

  struct FreeDeleter {
    void operator()(void* p) const;
  };
  std::unique_ptr<unsigned char, FreeDeleter> block_;
  unsigned char* base_ = nullptr;
  uint64_t capacity_ = 0;
  std::vector<Chunk> chunks_;
  std::vector<Id> free_ids_;
  std::map<uint64_t, Id> by_offset_;  // chunks of size > 0, by address
  uint64_t live_ = 0, peak_ = 0, compactions_ = 0, moved_bytes_ = 0;
};

}  // namespace frugal::cpu
