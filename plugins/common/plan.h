// A schedule for one request of B samples: steps "run layer k on samples
// [first, first + count)". Parsed from the planner's JSON, or built here for the
// whole-batch run and for the one-sample-at-a-time run. Both executors take the
// same plans.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/layer_graph.h"

namespace frugal::exec {

struct PlanStep {
  int layer = 0;
  int64_t first = 0, count = 0;
};

struct Plan {
  std::vector<PlanStep> steps;
};

// {"steps":[{"layer": name or index, "first": s, "count": n}, ...], ...}; other
// keys are ignored. Throws frugal::Error naming the step and field at fault
// (the order and coverage of the steps are checked when the plan runs).
Plan parse_plan(const std::string& json, const LayerGraph& m);

// Every layer once on all B samples, in layer order.
Plan whole_batch_plan(const LayerGraph& m, int64_t batch);
// Sample 0 through every layer, then sample 1, ...: the least memory a request
// of B samples can be run in by this executor's layer order (for B = 1 it is
// the whole-batch plan).
Plan one_sample_at_a_time_plan(const LayerGraph& m, int64_t batch);

// The whole batch with its first layers in sub-batches that stay in the cache:
// each layer's step reads and writes in + out bytes per sample; a prefix of the
// layers runs on chunks of c samples (the largest c at which every step of it
// over `cache_bytes` at the whole batch fits, at least 1), chunk after chunk,
// and the rest on the whole batch. A consumer then reads what its producer just
// wrote from the cache, not from memory (MobileNet-V2's first layers at batch 8
// write 4.8 MB a sample). The prefix ends after the layer over the limit where
// the bytes kept in the cache (the whole-batch in + out of its layers over the
// limit) most exceed the weights its chunks read again (chunks - 1 times the
// prefix's weights: ResNet-50 at batch 32 keeps its layer3 and layer4, 85 MB
// of weights, on the whole batch). Layers are in topological order, so the
// prefix depends on nothing after it. No layer over the limit: the whole-batch plan.
Plan cache_blocked_plan(const LayerGraph& m, int64_t batch, uint64_t cache_bytes);

// "layer 'conv3' on samples 4..7"
std::string describe_step(const LayerGraph& m, const PlanStep& s);

}  // namespace frugal::exec
