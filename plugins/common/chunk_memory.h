// The memory model's allocation interface and its two bookkeepers, which own
// no memory:
//   - CountingMemory counts live bytes only (the plan simulation);
//   - OffsetAllocator places chunks at byte offsets inside a block of exactly
//     `capacity` bytes. Chunk sizes are exact (no rounding, no headers), so the
//     live bytes it measures are exactly the bytes of the chunks held. A chunk
//     goes to the smallest hole it fits (at the hole's bottom; in the hole at
//     the top of the block, at the block's top end, so that the free space
//     stays in one piece between the two ends). When no
//     hole is big enough but the free bytes in total are, it compacts: every
//     live chunk slides down (contents to be preserved) so the free space
//     becomes one block at the top; the slides are listed as Moves, in the
//     order they must be applied (ascending: a chunk only ever moves down over
//     free space or over bytes already moved away). Any set of chunks whose
//     sizes sum to <= capacity therefore fits.
//     alloc_after() places a chunk right behind another (a tensor growing by
//     the samples of its next step, so that a later step finds them in one
//     block); when the bytes behind it are taken it moves the fewest bytes it
//     can (chunks above slide up, or it and the chunks below slide down, or it
//     moves to a hole big enough for both), and that too always succeeds when
//     the live bytes fit.
// The CPU arena is an OffsetAllocator plus a host block (memmove per move); the
// Vulkan executor runs the same allocator offline over the whole plan and
// records the moves as buffer copies.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

namespace frugal::exec {

class ChunkMemory {
 public:
  using Id = uint32_t;
  virtual ~ChunkMemory() = default;
  virtual Id alloc(uint64_t bytes) = 0;
  // A chunk that starts exactly where chunk `prev` ends (merge() can then join them).
  virtual Id alloc_after(Id prev, uint64_t bytes) = 0;
  // Joins chunk `tail`, which starts where `head` ends, into `head`.
  virtual void merge(Id head, Id tail) = 0;
  virtual void release(Id id) = 0;
  // Splits chunk `id` at byte `at`: `id` keeps [0, at), the returned id gets the rest.
  virtual Id split(Id id, uint64_t at) = 0;
  virtual uint64_t live_bytes() const = 0;
  virtual uint64_t peak_bytes() const = 0;
};

class CountingMemory : public ChunkMemory {
 public:
  Id alloc(uint64_t bytes) override;
  Id alloc_after(Id prev, uint64_t bytes) override;
  void merge(Id head, Id tail) override;
  void release(Id id) override;
  Id split(Id id, uint64_t at) override;
  uint64_t live_bytes() const override { return live_; }
  uint64_t peak_bytes() const override { return peak_; }

 private:
  std::vector<uint64_t> sizes_;
  std::vector<bool> used_;
  uint64_t live_ = 0, peak_ = 0;
};

class OffsetAllocator : public ChunkMemory {
 public:
  // A copy of `bytes` bytes from offset `from` to offset `to` (source and
  // destination may overlap: a slide).
  struct Move {
    uint64_t from = 0, to = 0, bytes = 0;
  };

  explicit OffsetAllocator(uint64_t capacity = 0) : capacity_(capacity) {}
  // Drops every chunk and sets a new capacity.
  void reset(uint64_t capacity);
  uint64_t capacity() const { return capacity_; }

  // Throws frugal::Error when live + bytes > capacity. May compact (see moves()).
  Id alloc(uint64_t bytes) override;
  // The same, placed right behind `prev`; may move chunks, `prev` included.
  Id alloc_after(Id prev, uint64_t bytes) override;
  void merge(Id head, Id tail) override;
  void release(Id id) override;
  Id split(Id id, uint64_t at) override;
  uint64_t live_bytes() const override { return live_; }
  uint64_t peak_bytes() const override { return peak_; }

  uint64_t size(Id id) const { return chunks_[id].size; }
  uint64_t offset(Id id) const { return chunks_[id].offset; }
  // The moves of the compactions since the last take_moves(), in order.
  const std::vector<Move>& moves() const { return moves_; }
  std::vector<Move> take_moves();
  void clear_moves() { moves_.clear(); }
  // The highest end of any chunk ever placed since clear(): the bytes touched.
  uint64_t extent() const { return extent_; }

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
  // Moves chunks so that at least `need` free bytes follow chunk `prev`.
  void make_room_after(Id prev, uint64_t need);
  // Moves chunk `id` to `offset` (recorded; by_offset_ is rebuilt by the caller).
  void move_chunk(Id id, uint64_t offset);
  void index_by_offset();

  // Where chunks may end: the capacity rounded down to 4 bytes. A budget is
  // any number of bytes, and a chunk slid up to an odd top would hold its
  // floats at odd addresses; chunks are multiples of 4 bytes, so a set of them
  // that fits the capacity fits this too.
  uint64_t usable_end() const { return capacity_ & ~uint64_t(3); }

  uint64_t capacity_ = 0;
  std::vector<Chunk> chunks_;
  std::vector<Id> free_ids_;
  std::map<uint64_t, Id> by_offset_;  // chunks of size > 0, by address
  std::vector<Move> moves_;
  uint64_t live_ = 0, peak_ = 0, compactions_ = 0, moved_bytes_ = 0, extent_ = 0;
};

// A move split into copies whose source and destination do not overlap (what
// a device copy command requires): pieces no longer than the shift, lowest
// first for a move down, highest first for a move up. Each piece overwrites
// bytes the previous one read, so they must run in order (a barrier between
// them on a device).
std::vector<OffsetAllocator::Move> non_overlapping_pieces(const OffsetAllocator::Move& m);

}  // namespace frugal::exec
