// The plan checker: simulates a plan step by step under the executor's memory
// model (docs/PLAN.md) and is the single source of truth for a plan's peak
// memory and time. The planners, the tests, the executors and the Lua CLI all
// call it; nothing else computes a plan's peak.
//
// Memory model: the request's B input samples are in memory from the start and
// stay until every layer reading the network input has run on them; a step "run
// layer k on samples [s, s+n)" needs every activation sample held at that moment
// plus out(k, n) + ws(k, n); after it, the workspace is gone and each input sample
// that every consumer of its tensor has now processed is freed; outputs of layers
// that nobody reads (the network outputs) stay until the end.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cost_table.h"

namespace frugal::planner {

struct Step {
  int layer = 0;  // index into the cost table
  int first = 0;  // first sample
  int count = 0;  // number of samples, 1..batch_max
  bool operator==(const Step& o) const { return layer == o.layer && first == o.first && count == o.count; }
};

// A phase: a stretch of steps after which every sample of the request is either
// finished (processed by every layer) or untouched. A latency bound applies to it.
struct Phase {
  int first_step = 0;
  int step_count = 0;
  int first_sample = 0;  // lowest sample finished in the phase
  int sample_count = 0;
  double seconds = 0;
};

struct PlanCheck {
  uint64_t peak_bytes = 0;
  int peak_step = -1;
  double time_total_s = 0;
  double time_per_sample_s = 0;
  std::vector<uint64_t> step_bytes;  // live bytes while each step runs
  std::vector<Phase> phases;
  double max_phase_s = 0;
};

// Describes step i for messages: "step 17 (layer 'conv3' on samples 4..7)".
std::string describe_step(const CostTable& costs, const std::vector<Step>& steps, size_t i);

// Checks that the steps are executable (each layer runs on every sample of the
// request exactly once and in order, inputs exist before use, batches within
// 1..batch_max)
// and simulates memory and time. Throws frugal::Error naming the step at fault.
PlanCheck check_plan(const CostTable& costs, int batch, const std::vector<Step>& steps);

// Same, and throws frugal::Error when the peak exceeds budget_bytes, naming the
// step that needs the most.
PlanCheck check_plan_within(const CostTable& costs, int batch, const std::vector<Step>& steps,
                            uint64_t budget_bytes);

// Plan JSON <-> steps ("steps":[{"layer": name, "first": s, "count": n}]).
std::vector<Step> steps_from_json(const CostTable& costs, const nlohmann::json& plan);
nlohmann::json steps_to_json(const CostTable& costs, const std::vector<Step>& steps);

// The JSON entry point for other components: validate_plan(costs, plan) parses
// both, checks the steps for the plan's "batch", enforces its "budget_bytes" when
// present, and returns {"peak_bytes","peak_step","time_per_sample_s",
// "time_total_s","max_phase_s","phases":[...],"step_bytes":[...]}.
nlohmann::json validate_plan(const nlohmann::json& costs, const nlohmann::json& plan);
nlohmann::json plan_check_to_json(const PlanCheck& c);

}  // namespace frugal::planner
