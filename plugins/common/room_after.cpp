// OffsetAllocator::alloc_after and merge: a tensor grows by the samples of its
// next step right behind the samples it holds, so every step finds each input
// in one block and runs as one kernel call. Making room moves the fewest bytes
// among three ways (chunks above slide up; the tensor and chunks below slide
// down; the tensor moves to a hole that holds it and the new chunk) and falls
// back to gathering all free bytes behind it, which always works when the
// live bytes fit. Live bytes never change: the memory model is untouched.
#include <algorithm>
#include <string>
#include <utility>

#include "common/chunk_memory.h"
#include "frugal/error.h"

namespace frugal::exec {

namespace {

struct Slot {
  ChunkMemory::Id id = 0;
  uint64_t offset = 0, size = 0;
  uint64_t end() const { return offset + size; }
};

// Chunk moves (id, new offset) in the order they must be applied, and the bytes they copy.
struct Relocation {
  std::vector<std::pair<ChunkMemory::Id, uint64_t>> moves;
  uint64_t cost = UINT64_MAX;
  bool feasible() const { return cost != UINT64_MAX; }
};

class RoomPlanner {
 public:
  RoomPlanner(std::vector<Slot> order, size_t prev, uint64_t capacity, uint64_t need)
      : s_(std::move(order)), p_(prev), capacity_(capacity), need_(need) {}

  // Chunks above prev slide up, each by as little as it must (highest first).
  Relocation slide_up(bool all = false) const {
    Relocation r;
    uint64_t acc = behind(), cost = 0, goal = all ? UINT64_MAX : need_;
    for (size_t k = p_ + 1; k < s_.size() && acc < goal; ++k) {
      const uint64_t d = all ? free_above(k) : need_ - acc;
      if (d > 0) r.moves.emplace_back(s_[k].id, s_[k].offset + d);
      cost += d > 0 ? s_[k].size : 0;
      acc += start_after(k) - s_[k].end();
    }
    std::reverse(r.moves.begin(), r.moves.end());
    if (all || acc >= need_) r.cost = cost;
    return r;
  }

  // Prev and the chunks below it slide down, each by as little as it must (lowest first).
  Relocation slide_down(uint64_t need, uint64_t acc) const {
    Relocation r;
    uint64_t cost = 0;
    for (size_t k = p_ + 1; k-- > 0 && acc < need;) {
      const uint64_t d = need - acc;
      r.moves.emplace_back(s_[k].id, s_[k].offset - std::min(d, s_[k].offset));
      cost += s_[k].size;
      acc += s_[k].offset - end_before(k);
    }
    std::reverse(r.moves.begin(), r.moves.end());
    if (acc >= need) r.cost = cost;
    return r;
  }
  Relocation slide_down() const { return slide_down(need_, behind()); }

  // Prev moves to the smallest hole not next to it that holds it and `need` bytes more.
  Relocation move_to_hole() const {
    Relocation r;
    const uint64_t want = s_[p_].size + need_;
    uint64_t best = UINT64_MAX, at = 0;
    for (size_t k = 0; k <= s_.size(); ++k) {  // the hole below chunk k (k = size: the top)
      if (k == p_ || k == p_ + 1) continue;
      const uint64_t lo = end_before(k), hi = k < s_.size() ? s_[k].offset : capacity_;
      if (hi - lo >= want && hi - lo < best) {
        best = hi - lo;
        at = lo;
      }
    }
    if (best == UINT64_MAX) return r;
    r.moves.emplace_back(s_[p_].id, at);
    r.cost = s_[p_].size;
    return r;
  }

  // Every chunk above slides up to the top, then prev and those below slide down as needed.
  Relocation gather_all() const {
    Relocation up = slide_up(true), down = slide_down(need_, behind() + free_above(p_ + 1));
    Relocation r;
    r.moves = up.moves;
    r.moves.insert(r.moves.end(), down.moves.begin(), down.moves.end());
    r.cost = 0;  // the caller uses it only when nothing cheaper works
    return r;
  }

 private:
  uint64_t behind() const { return start_after(p_) - s_[p_].end(); }
  uint64_t start_after(size_t k) const { return k + 1 < s_.size() ? s_[k + 1].offset : capacity_; }
  uint64_t end_before(size_t k) const { return k == 0 ? 0 : s_[k - 1].end(); }
  // Free bytes above the start of chunk k (gaps between chunks k.. and the top).
  uint64_t free_above(size_t k) const {
    uint64_t f = 0;
    for (size_t i = k; i < s_.size(); ++i) f += start_after(i) - s_[i].end();
    return f;
  }

  std::vector<Slot> s_;
  size_t p_;
  uint64_t capacity_, need_;
};

}  // namespace

ChunkMemory::Id OffsetAllocator::alloc_after(Id prev, uint64_t bytes) {
  if (prev >= chunks_.size() || !chunks_[prev].used) throw Error("arena: allocation after a free chunk");
  if (bytes == 0 || chunks_[prev].size == 0) return alloc(bytes);
  if (bytes > usable_end() - live_)
    throw Error("arena: " + std::to_string(bytes) + " bytes do not fit (" + std::to_string(live_) + " of " +
                std::to_string(capacity_) + " bytes live)");
  const uint64_t end = chunks_[prev].offset + chunks_[prev].size;
  auto next = by_offset_.upper_bound(chunks_[prev].offset);
  const uint64_t room = (next == by_offset_.end() ? usable_end() : next->first) - end;
  if (room < bytes) make_room_after(prev, bytes);
  const Id id = new_id();  // may reallocate chunks_: index again below
  const uint64_t at = chunks_[prev].offset + chunks_[prev].size;
  chunks_[id] = Chunk{at, bytes, true};
  by_offset_[at] = id;
  extent_ = std::max(extent_, at + bytes);
  live_ += bytes;
  peak_ = std::max(peak_, live_);
  return id;
}

void OffsetAllocator::make_room_after(Id prev, uint64_t need) {
  std::vector<Slot> order;
  size_t p = 0;
  for (const auto& kv : by_offset_) {
    if (kv.second == prev) p = order.size();
    order.push_back(Slot{kv.second, kv.first, chunks_[kv.second].size});
  }
  const RoomPlanner planner(std::move(order), p, usable_end(), need);
  Relocation best;
  for (Relocation r : {planner.slide_up(), planner.slide_down(), planner.move_to_hole()})
    if (r.feasible() && r.cost < best.cost) best = std::move(r);
  if (!best.feasible()) best = planner.gather_all();
  ++compactions_;
  for (const auto& [id, offset] : best.moves) move_chunk(id, offset);
  index_by_offset();
}

void OffsetAllocator::move_chunk(Id id, uint64_t offset) {
  Chunk& c = chunks_[id];
  if (c.offset == offset) return;
  moves_.push_back(Move{c.offset, offset, c.size});
  moved_bytes_ += c.size;
  c.offset = offset;
  extent_ = std::max(extent_, offset + c.size);
}

void OffsetAllocator::index_by_offset() {
  std::map<uint64_t, Id> m;
  for (const auto& kv : by_offset_) m[chunks_[kv.second].offset] = kv.second;
  by_offset_.swap(m);
}

void OffsetAllocator::merge(Id head, Id tail) {
  if (head >= chunks_.size() || tail >= chunks_.size() || !chunks_[head].used || !chunks_[tail].used ||
      head == tail)
    throw Error("arena: bad merge");
  Chunk &h = chunks_[head], &t = chunks_[tail];
  if (h.size > 0 && t.size > 0 && h.offset + h.size != t.offset)
    throw Error("arena: merge of chunks that do not touch");
  if (t.size > 0) {
    by_offset_.erase(t.offset);
    if (h.size == 0) {
      h.offset = t.offset;
      by_offset_[h.offset] = head;
    }
  }
  h.size += t.size;
  t = Chunk{};
  free_ids_.push_back(tail);
}

}  // namespace frugal::exec
