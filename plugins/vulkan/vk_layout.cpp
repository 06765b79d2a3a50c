#include "vk_layout.h"

#include <algorithm>

namespace frugal::vk {

namespace {

struct Chunk {
  int first = 0, last = 0;  // steps it is live in; step -1 places the inputs
  uint64_t bytes = 0;
  uint64_t* offset = nullptr;
};

constexpr uint64_t kAlign = 4;  // floats; descriptor windows absorb coarser alignment

}  // namespace

Layout plan_layout(const Model& m, int64_t batch) {
  Layout out;
  const int layers = int(m.layers().size());
  out.tensor_offset.assign(m.tensors().size(), 0);
  out.ws_offset.assign(size_t(layers), 0);
  std::vector<Chunk> chunks;
  for (size_t t = 0; t < m.tensors().size(); ++t) {
    const ActivationTensor& a = m.tensors()[t];
    Chunk c;
    c.first = a.producer;  // -1 for inputs
    c.last = a.consumers.empty() ? c.first : a.consumers.back();
    if (a.is_output) c.last = layers;  // held to the end
    c.bytes = m.bytes(int(t), batch);
    c.offset = &out.tensor_offset[t];
    if (c.bytes) chunks.push_back(c);
  }
  for (int l = 0; l < layers; ++l) {
    const uint64_t ws = m.layer_bytes(l, batch).ws_bytes;
    if (ws) chunks.push_back(Chunk{l, l, ws, &out.ws_offset[size_t(l)]});
  }
  // Peak of live bytes, step by step.
  for (int step = -1; step <= layers; ++step) {
    uint64_t live = 0;
    for (const Chunk& c : chunks)
      if (c.first <= step && step <= c.last) live += c.bytes;
    if (live > out.peak_live) {
      out.peak_live = live;
      out.peak_step = step == layers ? layers - 1 : step;
    }
  }
  // Offsets: largest first, lowest gap clear of every overlapping chunk.
  std::vector<size_t> order(chunks.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return chunks[a].bytes > chunks[b].bytes; });
  std::vector<size_t> placed;
  for (size_t i : order) {
    Chunk& c = chunks[i];
    std::vector<std::pair<uint64_t, uint64_t>> busy;  // [begin, end) of overlapping placed chunks
    for (size_t j : placed) {
      const Chunk& p = chunks[j];
      if (p.first <= c.last && c.first <= p.last) busy.emplace_back(*p.offset, *p.offset + p.bytes);
    }
    std::sort(busy.begin(), busy.end());
    uint64_t at = 0;
    for (const auto& b : busy) {
      if (at + c.bytes <= b.first) break;
      at = std::max(at, (b.second + kAlign - 1) / kAlign * kAlign);
    }
    *c.offset = at;
    out.extent = std::max(out.extent, at + c.bytes);
    placed.push_back(i);
  }
  return out;
}

}  // namespace frugal::vk
