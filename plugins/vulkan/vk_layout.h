// Where each activation of a whole-batch run lives inside the budget buffer.
// The run follows the cpu executor's memory model: the request's inputs are
// placed first; layer k allocates its output, then its workspace; after it
// ran, the workspace and every input no later layer reads are freed; network
// outputs stay to the end. From those lifetimes, offsets are assigned offline
// (largest first, each at the lowest offset clear of every chunk whose lifetime
// overlaps), since the GPU cannot compact. The layout's extent can exceed the
// peak of live bytes by fragmentation; the run needs the extent.
#pragma once

#include <cstdint>
#include <vector>

#include "vk_model.h"

namespace frugal::vk {

struct Layout {
  std::vector<uint64_t> tensor_offset;  // per activation tensor (unused tensors: 0)
  std::vector<uint64_t> ws_offset;      // per layer
  uint64_t extent = 0;                  // bytes of the buffer the run touches
  uint64_t peak_live = 0;               // most bytes live at one moment (the cpu executor's peak)
  int peak_step = -1;                   // layer where it is reached; -1: holding the inputs
};

Layout plan_layout(const Model& m, int64_t batch);

}  // namespace frugal::vk
