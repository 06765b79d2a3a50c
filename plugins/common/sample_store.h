// The memory model of a run, shared by the plan simulation (CountingMemory) and
// the real runs (the CPU arena; the Vulkan executor's offline placement with an
// OffsetAllocator), so all follow exactly the same rules:
//   - the request's B input samples are placed first, one chunk per input;
//   - a step "layer k on samples [s, s+n)" allocates out(k,n), then ws(k,n);
//     after the kernel ran it frees ws, then frees every input sample whose
//     consumers have all run on it (pieces of chunks are split off and freed);
//   - network outputs stay until the end.
// Each layer takes its samples in order (a step starts where the layer's last
// one ended), so the samples a tensor holds are one range; its chunk grows at
// the end (the output is allocated right behind it, ChunkMemory::alloc_after,
// and merged) and shrinks at the front. Every step therefore finds each input
// in one block and runs as ONE kernel call at its batch, as it was priced;
// keeping the blocks whole moves bytes (time) but never adds live bytes.
// It also checks the plan: a layer runs only on samples its inputs hold, on
// each sample exactly once, in order.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "common/chunk_memory.h"
#include "common/layer_graph.h"
#include "common/plan.h"

namespace frugal::exec {

class SampleStore {
 public:
  struct Piece {
    int64_t first = 0, count = 0;
    ChunkMemory::Id chunk = 0;
  };

  SampleStore(const LayerGraph& m, ChunkMemory& mem, int64_t batch);

  // Allocates one chunk per network input (all B samples); returns them in
  // model input order so the caller can fill them. Then drop_unread_inputs().
  std::vector<ChunkMemory::Id> place_inputs();
  // Frees inputs that no layer reads and that are no output.
  void drop_unread_inputs();
  // Throws frugal::Error naming step `index` when its samples are out of range,
  // already done for that layer, or not yet produced for one of its inputs.
  void check_ready(size_t index, const PlanStep& s) const;
  // Allocates the step's output (returned) and workspace (ws_chunk; has_ws false when 0 bytes).
  ChunkMemory::Id begin_step(const PlanStep& s, uint64_t ws_bytes, ChunkMemory::Id& ws_chunk, bool& has_ws);
  // Frees the workspace and the samples no longer needed; records the output.
  void end_step(const PlanStep& s, ChunkMemory::Id out, ChunkMemory::Id ws_chunk, bool has_ws);
  // Throws naming a layer and samples it never ran on.
  void check_complete() const;

  // Held pieces of tensor t, ordered by first sample (at most one: see above).
  const std::vector<Piece>& pieces(int t) const { return pieces_[size_t(t)]; }
  // The piece of t holding sample j (must be held).
  const Piece& piece_of(int t, int64_t j) const;
  // The piece of t holding every sample of step s (input t of its layer).
  const Piece& input_piece(int t, const PlanStep& s) const;
  void release_all();

 private:
  void release_samples(int t, int64_t a, int64_t b);

  const LayerGraph& m_;
  ChunkMemory& mem_;
  int64_t batch_;
  std::vector<std::vector<Piece>> pieces_;       // per tensor
  std::vector<std::vector<uint32_t>> consumed_;  // per tensor, per sample: consumer layers done
  std::vector<std::vector<char>> produced_;      // per tensor, per sample
  std::vector<std::vector<int32_t>> done_step_;  // per layer, per sample: step that ran it, or -1
  std::vector<int64_t> next_sample_;             // per layer: the first sample of its next step
  size_t current_step_ = 0;
};

}  // namespace frugal::exec
