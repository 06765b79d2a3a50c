#include "common/sample_store.h"

#include <algorithm>
#include <string>

#include "frugal/error.h"

namespace frugal::exec {

SampleStore::SampleStore(const LayerGraph& m, ChunkMemory& mem, int64_t batch)
    : m_(m), mem_(mem), batch_(batch) {
  const size_t nt = m.tensors().size();
  pieces_.resize(nt);
  consumed_.assign(nt, std::vector<uint32_t>(size_t(batch), 0));
  produced_.assign(nt, std::vector<char>(size_t(batch), 0));
  done_step_.assign(m.layers().size(), std::vector<int32_t>(size_t(batch), -1));
  next_sample_.assign(m.layers().size(), 0);
}

std::vector<ChunkMemory::Id> SampleStore::place_inputs() {
  std::vector<ChunkMemory::Id> ids;
  for (int t : m_.inputs()) {
    const ChunkMemory::Id id = mem_.alloc(m_.bytes(t, batch_));
    pieces_[size_t(t)].push_back(Piece{0, batch_, id});
    std::fill(produced_[size_t(t)].begin(), produced_[size_t(t)].end(), 1);
    ids.push_back(id);
  }
  return ids;
}

void SampleStore::drop_unread_inputs() {
  for (int t : m_.inputs()) {
    const ActivationTensor& a = m_.tensors()[size_t(t)];
    if (a.consumers.empty() && !a.is_output) release_samples(t, 0, batch_);
  }
}

void SampleStore::check_ready(size_t index, const PlanStep& s) const {
  const Layer& L = m_.layers()[size_t(s.layer)];
  const std::string where = "plan: step " + std::to_string(index) + " (" + describe_step(m_, s) + ")";
  if (s.first < 0 || s.count < 1 || s.first + s.count > batch_)
    throw Error(where + ": samples must lie in 0.." + std::to_string(batch_ - 1) + " (the request has " +
                std::to_string(batch_) + " sample" + (batch_ == 1 ? "" : "s") + ")");
  for (int64_t j = s.first; j < s.first + s.count; ++j) {
    const int32_t prev = done_step_[size_t(s.layer)][size_t(j)];
    if (prev >= 0)
      throw Error(where + ": sample " + std::to_string(j) + " already ran through this layer at step " +
                  std::to_string(prev));
  }
  const int64_t next = next_sample_[size_t(s.layer)];
  if (s.first != next)
    throw Error(where +
                ": a layer takes its samples in order (each step starts where its previous one "
                "ended); the next sample of '" +
                L.name + "' is " + std::to_string(next));
  for (int t : L.inputs) {
    for (int64_t j = s.first; j < s.first + s.count; ++j) {
      if (!produced_[size_t(t)][size_t(j)]) {
        const int p = m_.tensors()[size_t(t)].producer;
        throw Error(where + ": its input '" + m_.tensors()[size_t(t)].name + "' (from layer '" +
                    m_.layers()[size_t(p)].name + "') does not hold sample " + std::to_string(j) + " yet");
      }
    }
  }
}

ChunkMemory::Id SampleStore::begin_step(const PlanStep& s, uint64_t ws_bytes, ChunkMemory::Id& ws_chunk,
                                        bool& has_ws) {
  const Layer& L = m_.layers()[size_t(s.layer)];
  const uint64_t out_bytes = m_.bytes(L.output, s.count);
  // Behind the samples the output tensor holds: they are s.first - 1, s.first - 2, ...
  const auto& held = pieces_[size_t(L.output)];
  const ChunkMemory::Id out =
      held.empty() ? mem_.alloc(out_bytes) : mem_.alloc_after(held.back().chunk, out_bytes);
  has_ws = ws_bytes > 0;
  if (has_ws) ws_chunk = mem_.alloc(ws_bytes);
  return out;
}

void SampleStore::end_step(const PlanStep& s, ChunkMemory::Id out, ChunkMemory::Id ws_chunk, bool has_ws) {
  const Layer& L = m_.layers()[size_t(s.layer)];
  if (has_ws) mem_.release(ws_chunk);
  const int64_t a = s.first, b = s.first + s.count;
  for (int64_t j = a; j < b; ++j) done_step_[size_t(s.layer)][size_t(j)] = int32_t(current_step_);
  next_sample_[size_t(s.layer)] = b;
  ++current_step_;

  // The output joins the piece it was placed behind.
  auto& ps = pieces_[size_t(L.output)];
  if (ps.empty()) {
    ps.push_back(Piece{a, s.count, out});
  } else {
    if (ps.back().first + ps.back().count != a)
      throw Error("internal: an output piece does not follow its tensor");
    mem_.merge(ps.back().chunk, out);
    ps.back().count += s.count;
  }
  for (int64_t j = a; j < b; ++j) produced_[size_t(L.output)][size_t(j)] = 1;

  // Inputs: free the samples every consumer has now run on.
  for (int t : L.inputs) {
    const ActivationTensor& at = m_.tensors()[size_t(t)];
    int64_t run_start = -1;
    for (int64_t j = a; j <= b; ++j) {
      bool free_it = false;
      if (j < b) {
        uint32_t& c = consumed_[size_t(t)][size_t(j)];
        ++c;
        free_it = c == at.consumers.size() && !at.is_output;
      }
      if (free_it && run_start < 0) run_start = j;
      if (!free_it && run_start >= 0) {
        release_samples(t, run_start, j);
        run_start = -1;
      }
    }
  }
  // An output nobody reads and that is no network output is dropped at once.
  const ActivationTensor& ot = m_.tensors()[size_t(L.output)];
  if (ot.consumers.empty() && !ot.is_output) release_samples(L.output, a, b);
}

void SampleStore::release_samples(int t, int64_t a, int64_t b) {
  auto& ps = pieces_[size_t(t)];
  const uint64_t sb = m_.sample_bytes(t);
  std::vector<Piece> kept;
  for (const Piece& p : ps) {
    const int64_t lo = std::max(a, p.first), hi = std::min(b, p.first + p.count);
    if (lo >= hi) {
      kept.push_back(p);
      continue;
    }
    // Split into [p.first, lo) [lo, hi) [hi, end): keep the outer parts, free the middle.
    ChunkMemory::Id mid = p.chunk;
    if (lo > p.first) {
      mid = mem_.split(p.chunk, uint64_t(lo - p.first) * sb);
      kept.push_back(Piece{p.first, lo - p.first, p.chunk});
    }
    if (hi < p.first + p.count) {
      const ChunkMemory::Id tail = mem_.split(mid, uint64_t(hi - lo) * sb);
      kept.push_back(Piece{hi, p.first + p.count - hi, tail});
    }
    mem_.release(mid);
  }
  std::sort(kept.begin(), kept.end(), [](const Piece& x, const Piece& y) { return x.first < y.first; });
  ps.swap(kept);
}

const SampleStore::Piece& SampleStore::piece_of(int t, int64_t j) const {
  const auto& ps = pieces_[size_t(t)];
  auto it = std::upper_bound(ps.begin(), ps.end(), j, [](int64_t v, const Piece& p) { return v < p.first; });
  if (it == ps.begin() || (it - 1)->first + (it - 1)->count <= j)
    throw Error("internal: sample " + std::to_string(j) + " of '" + m_.tensors()[size_t(t)].name +
                "' is not held");
  return *(it - 1);
}

void SampleStore::check_complete() const {
  for (size_t l = 0; l < done_step_.size(); ++l) {
    const auto& d = done_step_[l];
    for (int64_t j = 0; j < batch_; ++j) {
      if (d[size_t(j)] >= 0) continue;
      int64_t k = j;
      while (k + 1 < batch_ && d[size_t(k + 1)] < 0) ++k;
      throw Error("plan: layer '" + m_.layers()[l].name + "' never runs on sample" +
                  (k == j ? " " + std::to_string(j) : "s " + std::to_string(j) + ".." + std::to_string(k)));
    }
  }
}

const SampleStore::Piece& SampleStore::input_piece(int t, const PlanStep& s) const {
  const Piece& p = piece_of(t, s.first);
  if (p.first + p.count < s.first + s.count)
    throw Error("internal: the samples of '" + m_.tensors()[size_t(t)].name + "' that " +
                describe_step(m_, s) + " reads are not in one piece");
  return p;
}

void SampleStore::release_all() {
  for (size_t t = 0; t < pieces_.size(); ++t) {
    for (const Piece& p : pieces_[t]) mem_.release(p.chunk);
    pieces_[t].clear();
  }
}

}  // namespace frugal::exec
