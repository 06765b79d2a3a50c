// A plan placed offline: the whole allocation sequence of a run, by the common
// memory model (sample_store.h) over the compacting offset allocator, computed
// before anything runs. An executor that cannot compact on the fly (the Vulkan
// executor records one command buffer for the whole plan) records, per step,
// the allocator's moves as copies and then the kernel calls at the offsets
// found here. Its live bytes, and so its peak, are exactly the CPU arena's for
// the same plan; every offset + size stays within the capacity. Every step is
// one kernel call on all its samples (each input lies in one block).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/chunk_memory.h"
#include "common/layer_graph.h"
#include "common/plan.h"

namespace frugal::exec {

// A step's one kernel call on its samples [s.first, s.first + s.count): every input contiguous.
struct PlacedStep {
  std::vector<OffsetAllocator::Move> moves;  // compaction before the step's call, in order
  std::vector<uint64_t> in_offsets;  // per head-node input: byte offset of sample `first` (constants: 0)
  uint64_t out_offset = 0;           // byte offset of the output's sample `first`
  uint64_t ws_offset = 0, ws_bytes = 0;
};

// A held range of samples of a tensor and where it lies.
struct PlacedPiece {
  int64_t first = 0, count = 0;
  uint64_t offset = 0;
};

struct Placement {
  std::vector<uint64_t> input_offsets;            // per network input (all B samples, in model input order)
  std::vector<PlacedStep> steps;                  // per plan step
  std::vector<std::vector<PlacedPiece>> outputs;  // per network output: its pieces at the end of the run
  uint64_t peak = 0;                              // most bytes live at once
  uint64_t extent = 0;                            // highest byte touched (<= capacity)
  uint64_t compactions = 0, moved_bytes = 0;
};

// Places `plan` (a request of `batch` samples) in a block of `capacity` bytes.
// Throws frugal::Error naming the step when the plan is invalid or does not fit.
Placement place_plan(const LayerGraph& m, const Plan& plan, int64_t batch, uint64_t capacity);

// The placement extension's answer (plugin.h, FRUGAL_EXT_PLACEMENT) for a plan
// (the executor's plan of a run given that JSON text) in a block of `capacity`
// bytes (0: the plan's peak): {"peak_bytes","moved_bytes","compactions"}.
// Refuses a plan that does not fit as a run would (FRUGAL_ERR_BUDGET, naming the step).
std::string placement_summary_json(const LayerGraph& m, const Plan& plan, int64_t batch, uint64_t capacity);

}  // namespace frugal::exec
