// The profiler: measures a model on an executor and builds the planner's cost
// table (docs/COSTS.md; parsed by plugins/planner/cost_table.h):
//
//   {"model": NAME, "model_hash": H, "executor": "cpu", "device": "...", "threads": T,
//    "batch_max": B, "measured_batches": [...], "repeats": R,
//    "layers": [{"name", "inputs": [producer layer names, "" = network input],
//                "time_s": [per-SAMPLE seconds, batch 1..B],
//                "time_spread_s": [per-sample max - min of the repetitions; 0 where not measured],
//                "in_bytes": [...], "out_bytes": [...], "ws_bytes": [...],
//                "source": ["measured" | "interpolated", ...],
//                "step_overhead_s": S, "step_overhead_per_sample_s": P,
//                "ops", "nodes", "algorithm", "macs_per_sample": the executor's describe()}, ...],
//    "step_overhead": {"measured_by": ..., "batch": 1, "per_sample_batch": B, "runs": R, "passes": P},
//    "gate_activity": A | {layer: A}}   (only when the executor was created with that option)
//
// Layers are the executor's schedulable units, in its execution order. Times
// come from ExecutorClient::time_layer (the executor warms up, repeats and takes
// the median), in passes over the table, the fastest pass kept per entry
// (profile_passes.h); bytes from layer_bytes for EVERY batch 1..B (they are what the
// executor allocates, never estimates). Batch sizes not in the measured list get
// interpolated times (batch_fill.h). Results are cached on disk (cost_cache.h).
//
// Step overhead: a layer timed alone runs again and again on the same data, with
// its weights and inputs in cache; inside a plan, a step also allocates (and may
// move) its tensors and finds the weights evicted by the layers that ran in
// between; at larger batches its inputs and outputs no longer fit in cache as
// they do when the layer is timed again and again. The profiler runs the whole
// network at batch 1 and at batch B as plans of one step per layer (a warm-up
// and R timed runs each) and takes, per layer, the median of the step's seconds
// in the run report minus the layer's time alone at that batch: excess(1) and
// excess(B). Through both: excess(n) = "step_overhead_s" + n *
// "step_overhead_per_sample_s" (each at least 0), what the planner adds to every
// step of n samples (docs/COSTS.md).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "loader/executor_client.h"

namespace frugal {

// A step's excess over its layer timed alone, measured at batch 1 (excess_1)
// and at batch B (excess_B), as excess(n) = fixed_s + per_sample_s * n:
// per_sample_s = max(0, (excess_B - excess_1) / (B - 1)), fixed_s =
// max(0, excess_1 - per_sample_s); through both points whenever both parts
// come out >= 0. B = 1: fixed_s = max(0, excess_1), per_sample_s = 0.
struct StepOverhead {
  double fixed_s = 0, per_sample_s = 0;
};
StepOverhead split_step_overhead(double excess_1, double excess_B, int B);

// What identifies the measured thing, besides the executor's own describe().
struct ProfileSubject {
  std::string executor;    // plugin name
  std::string model_name;  // goes into the table's "model"
  std::string model_hash;  // hash of the ONNX bytes the executor was created from
};

struct ProfileOptions {
  int batch_max = 8;           // the table covers batch sizes 1..batch_max
  std::vector<int> batches;    // batch sizes to measure (each in 1..batch_max); empty: all
  int repeats = 5;             // timed runs per (layer, batch), after the executor's warm-up
  double min_seconds = 0.005;  // a (layer, batch) whose repeats total less is re-timed with more
  int max_repeats = 200;
  // A stall of the machine (another process taking the cores) shows as a spread
  // comparable to the median: such a (layer, batch) is timed again, up to
  // max_attempts times in all, and the attempt with the smallest median is kept.
  double max_relative_spread = 0.5;
  int max_attempts = 3;
  // Passes over the whole table (profile_passes.h): every entry is timed once
  // per pass with repeats / passes runs, and the pass with the smallest median
  // is kept; likewise the per-step overhead runs.
  int passes = 3;
  bool step_overhead = true;  // measure each layer's per-step overhead (runs the network at batch 1)
  bool reuse_cache = true;    // take the cached table when there is one
  bool write_cache = true;    // store what was measured (so a re-measure refreshes the cache)
  std::string cache_dir;      // "": the default folder (cost_cache.h)
  // Called before each measurement with a status line and the share of the
  // work done so far (0..1), and with ("", 1) at the end; may be empty.
  std::function<void(const std::string& status, double done)> progress;
};

// NOLINTNEXTLINE(bugprone-exception-escape): only nlohmann::json copies inside can throw (bad_alloc).
struct ProfileResult {
  nlohmann::json costs;
  bool cached = false;     // taken from the cache, nothing measured
  std::string cache_file;  // the cache entry read or written; "" when there is no cache folder
  double seconds = 0;      // wall time spent measuring
  std::string warnings;    // lines starting "warning:", "" when none
};

// Throws frugal::Error on bad options (naming them) and passes executor errors on.
ProfileResult profile_costs(ExecutorClient& ex, const ProfileSubject& subject, const ProfileOptions& opt);

// The batch sizes that will be measured: opt.batches sorted and deduplicated, or
// 1..batch_max. Throws naming a size outside 1..batch_max.
std::vector<int> measured_batch_list(const ProfileOptions& opt);

}  // namespace frugal
