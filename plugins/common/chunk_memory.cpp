#include "common/chunk_memory.h"

#include <algorithm>
#include <string>

#include "frugal/error.h"

namespace frugal::exec {

// ---- CountingMemory ---------------------------------------------------------

ChunkMemory::Id CountingMemory::alloc(uint64_t bytes) {
  sizes_.push_back(bytes);
  used_.push_back(true);
  live_ += bytes;
  if (live_ > peak_) peak_ = live_;
  return Id(sizes_.size() - 1);
}

void CountingMemory::release(Id id) {
  if (id >= used_.size() || !used_[id]) throw Error("memory simulation: chunk released twice");
  used_[id] = false;
  live_ -= sizes_[id];
}

ChunkMemory::Id CountingMemory::alloc_after(Id prev, uint64_t bytes) {
  if (prev >= used_.size() || !used_[prev]) throw Error("memory simulation: allocation after a free chunk");
  return alloc(bytes);
}

void CountingMemory::merge(Id head, Id tail) {
  if (head >= used_.size() || tail >= used_.size() || !used_[head] || !used_[tail] || head == tail)
    throw Error("memory simulation: bad merge");
  sizes_[head] += sizes_[tail];
  used_[tail] = false;
}

ChunkMemory::Id CountingMemory::split(Id id, uint64_t at) {
  if (id >= used_.size() || !used_[id] || at > sizes_[id]) throw Error("memory simulation: bad split");
  const uint64_t rest = sizes_[id] - at;
  sizes_[id] = at;
  sizes_.push_back(rest);
  used_.push_back(true);
  return Id(sizes_.size() - 1);
}

// ---- OffsetAllocator ----------------------------------------------------------

void OffsetAllocator::reset(uint64_t capacity) {
  clear();
  capacity_ = capacity;
}

void OffsetAllocator::clear() {
  chunks_.clear();
  free_ids_.clear();
  by_offset_.clear();
  moves_.clear();
  live_ = peak_ = compactions_ = moved_bytes_ = extent_ = 0;
}

std::vector<OffsetAllocator::Move> OffsetAllocator::take_moves() {
  std::vector<Move> m;
  m.swap(moves_);
  return m;
}

ChunkMemory::Id OffsetAllocator::new_id() {
  if (!free_ids_.empty()) {
    const Id id = free_ids_.back();
    free_ids_.pop_back();
    return id;
  }
  chunks_.push_back(Chunk{});
  return Id(chunks_.size() - 1);
}

ChunkMemory::Id OffsetAllocator::alloc(uint64_t bytes) {
  if (bytes > usable_end() - live_)
    throw Error("arena: " + std::to_string(bytes) + " bytes do not fit (" + std::to_string(live_) + " of " +
                std::to_string(capacity_) + " bytes live)");
  const Id id = new_id();
  Chunk& c = chunks_[id];
  c.size = bytes;
  c.used = true;
  c.offset = 0;
  if (bytes > 0) {
    // Best fit among the holes between chunks (and the top of the block).
    uint64_t best_off = UINT64_MAX, best_size = UINT64_MAX, prev_end = 0;
    auto consider = [&](uint64_t hole_off, uint64_t hole_size) {
      if (hole_size >= bytes && hole_size < best_size) {
        best_off = hole_off;
        best_size = hole_size;
      }
    };
    for (const auto& kv : by_offset_) {
      consider(prev_end, kv.first - prev_end);
      prev_end = kv.first + chunks_[kv.second].size;
    }
    consider(prev_end, usable_end() - prev_end);
    if (best_off == UINT64_MAX) {  // fragmented: slide everything down, then use the top
      compact();
      best_off =
          by_offset_.empty() ? 0 : by_offset_.rbegin()->first + chunks_[by_offset_.rbegin()->second].size;
    }
    // A chunk that lands in the hole at the top of the block takes its top end:
    // the free space stays one hole between the chunks at either end, and a
    // chain of steps alternates ends instead of fragmenting the block (whole-
    // batch plans of the zoo networks moved 38-58 MB per request without it).
    // (Rounded down to 64 bytes: the capacity is any budget, and kernels want
    // aligned floats; a bottom placement stays where it is when no aligned
    // offset fits the hole.)
    // Chunks under 1/1024 of the block (squeeze-and-excite's pooled values)
    // keep the hole's bottom: at the top end they pinned it, and the next
    // large chunk landed mid-block, where the step after had to compact
    // (EfficientNet-B0's whole-batch plans moved 5.6 MB at batch 1).
    const bool small = bytes < usable_end() / 1024;
    if (!by_offset_.empty() && !small && best_size != UINT64_MAX && best_off + best_size == usable_end()) {
      const uint64_t top = (usable_end() - bytes) & ~uint64_t(63);
      if (top >= best_off) best_off = top;
    }
    c.offset = best_off;
    by_offset_[best_off] = id;
    if (best_off + bytes > extent_) extent_ = best_off + bytes;
  }
  live_ += bytes;
  if (live_ > peak_) peak_ = live_;
  return id;
}

void OffsetAllocator::release(Id id) {
  if (id >= chunks_.size() || !chunks_[id].used) throw Error("arena: chunk released twice");
  Chunk& c = chunks_[id];
  if (c.size > 0) by_offset_.erase(c.offset);
  live_ -= c.size;
  c = Chunk{};
  free_ids_.push_back(id);
}

ChunkMemory::Id OffsetAllocator::split(Id id, uint64_t at) {
  if (id >= chunks_.size() || !chunks_[id].used || at > chunks_[id].size) throw Error("arena: bad split");
  const uint64_t off = chunks_[id].offset, rest = chunks_[id].size - at;
  const Id nid = new_id();  // may reallocate chunks_: index again below
  chunks_[nid] = Chunk{off + at, rest, true};
  chunks_[id].size = at;
  if (at == 0) by_offset_.erase(off);
  if (rest > 0) by_offset_[off + at] = nid;
  if (rest == 0) chunks_[nid].offset = 0;
  return nid;
}

void OffsetAllocator::compact() {
  ++compactions_;
  std::map<uint64_t, Id> moved;
  uint64_t next = 0;
  for (const auto& kv : by_offset_) {  // ascending: a chunk only ever moves down over free space
    Chunk& c = chunks_[kv.second];
    if (c.offset != next) {
      moves_.push_back(Move{c.offset, next, c.size});
      moved_bytes_ += c.size;
      c.offset = next;
    }
    moved[next] = kv.second;
    next += c.size;
  }
  by_offset_.swap(moved);
}

void OffsetAllocator::check() const {
  uint64_t prev_end = 0, sum = 0;
  for (const auto& kv : by_offset_) {
    const Chunk& c = chunks_[kv.second];
    if (!c.used || c.offset != kv.first || c.offset < prev_end || c.offset + c.size > usable_end())
      throw Error("arena: chunk table is inconsistent");
    prev_end = c.offset + c.size;
  }
  for (const Chunk& c : chunks_)
    if (c.used) sum += c.size;
  if (sum != live_) throw Error("arena: live bytes disagree with the chunks held");
}

std::vector<OffsetAllocator::Move> non_overlapping_pieces(const OffsetAllocator::Move& m) {
  std::vector<OffsetAllocator::Move> pieces;
  if (m.bytes == 0 || m.from == m.to) return pieces;
  const bool down = m.to < m.from;
  const uint64_t shift = down ? m.from - m.to : m.to - m.from;
  for (uint64_t done = 0; done < m.bytes; done += shift) {
    const uint64_t n = std::min(shift, m.bytes - done);
    const uint64_t at = down ? done : m.bytes - done - n;  // a move up copies its top first
    pieces.push_back(OffsetAllocator::Move{m.from + at, m.to + at, n});
  }
  return pieces;
}

}  // namespace frugal::exec
