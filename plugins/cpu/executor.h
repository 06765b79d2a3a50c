// One CPU executor instance: a compiled model, its arena, and the operations of
// the executor ABI (describe, layer_bytes, set_budget, run, time_layer) in C++.
// The C entry points in plugin_entry.cpp only translate to and from this class.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "arena.h"
#include "common/gate_activity.h"
#include "common/io_checks.h"
#include "common/plan.h"
#include "common/plan_memory.h"
#include "common/sample_store.h"
#include "frugal/executor_sdk.hpp"
#include "frugal/plugin.h"
#include "model.h"
#include "thread_pool.h"

namespace frugal::cpu {

struct ExecutorOptions {
  int threads = 1;
  // {"conv": "auto" | "blas" | "onednn"}: the Conv kernels' path;
  // {"winograd": "auto" | "off"}: 3x3 convs on oneDNN's Winograd kernels where it has them;
  // {"residual_add": "fused" | "separate"}: residual Adds in the packed 1x1 conv before them
  // {"se_scale": "fused" | "separate"}: squeeze-and-excite Muls in the packed 1x1 conv after them
  ConvOptions conv;
  std::optional<float> gate_threshold;  // {"gate_threshold": T}, T in [0, 1]: replaces every gate's threshold
  exec::GateActivity gate_activity;  // {"gate_activity": ...}: time_layer's stated activity (gate_activity.h)
  // {"time_layer": ...}: what time_layer flushes from the caches before each
  // timed repetition: output and workspace as in a run (cold), the inputs too
  // (cold_inputs), or nothing, leaving what the last repetition touched (warm)
  enum class TimeLayer { cold, cold_inputs, warm };
  TimeLayer time_layer = TimeLayer::cold;
  // {"schedule": "cache" | "whole"}: a run without a plan runs the whole batch
  // with its first layers in chunks that stay in the cache (exec::cache_blocked_plan),
  // or every layer on the whole batch at once
  bool cache_schedule = true;
  // {"cache_bytes": N}: the cache schedule's limit per step (default: half the
  // last-level cache this core shares, read from sysfs; 8 MiB when unknown)
  uint64_t cache_bytes = 0;
  // {"threads": T} (T in 1..4 x cores; default: the cores present). Unknown keys
  // are ignored ("device" is meaningless here). Throws frugal::Error.
  static ExecutorOptions parse(const char* json);
};

using exec::format_bytes;  // "12.3 MB (12345678 bytes)"
using exec::Plan;
using exec::PlanMemory;
using exec::PlanStep;

class Executor {
 public:
  // `done`, when given, hears of each weight the host lent by address as soon
  // as the model holds its copy (create_releasing, plugin.h).
  Executor(const void* onnx, size_t size, const ExecutorOptions& options, const sdk::WeightDone& done = {});
  // From the ABI's options JSON (may be NULL): what the plugin entry calls.
  Executor(const void* onnx, size_t size, const char* options_json, const sdk::WeightDone& done = {})
      : Executor(onnx, size, ExecutorOptions::parse(options_json), done) {}

  const Model& model() const { return model_; }
  std::string describe_json() const;
  frugal_layer_bytes layer_bytes(int layer, int batch) const;
  void set_budget(uint64_t bytes);

  // Validates `plan` for a request of `batch` samples and returns its memory
  // (same accounting as the run). Throws frugal::Error naming the step at fault.
  PlanMemory simulate(const Plan& plan, int64_t batch) const;

  // The plan of a run without one (options' schedule).
  Plan default_plan(int64_t batch) const;

  // Runs; plan_json NULL: default_plan. Returns the report JSON.
  std::string run(const char* plan_json, const frugal_tensor* inputs, size_t n_inputs, frugal_tensor* outputs,
                  size_t n_outputs);

  void time_layer(int layer, int batch, int repeats, double& median, double& spread);

  // FRUGAL_EXT_PLACEMENT (plugin.h): the moves a plan makes, and what moving costs.
  std::string place_json(const char* plan_json, int32_t batch, uint64_t capacity) const;
  double time_move(uint64_t capacity, int32_t repeats) const;

 private:
  // Runs step s as one kernel call; returns the calls made (0: an empty output).
  int run_step(const PlanStep& s, const exec::SampleStore& store, float* out, float* ws,
               exec::GateStats* stats) const;
  void use_threads() const;

  // What a step's report entry needs, recorded while the run is timed (the report's
  // JSON is written once the run's clock has stopped).
  struct StepRecord {
    int layer = 0;
    int64_t first = 0, count = 0;
    int calls = 0;
    uint64_t moved_bytes = 0;
    double move_seconds = 0, seconds = 0;
  };
  std::string report_json(const nlohmann::json& head);

  Model model_;
  ExecutorOptions options_;
  mutable ThreadPool pool_;  // shared by const run paths; holds no model state
  Arena arena_;
  bool budget_set_ = false;
  // The last run's plan and its simulated memory, kept for the next run with the
  // same plan text (none: the whole batch) and batch: a run repeated on the same
  // request neither parses nor simulates its plan again.
  struct PlanCache {
    bool valid = false;
    std::string plan_text;
    int64_t batch = 0;
    Plan plan;
    PlanMemory memory;
    // The arena of a run without a budget (auto_arena_bytes()); 0: not yet found.
    uint64_t auto_arena_bytes = 0;
  } plan_cache_;
  // The least arena, from the plan's peak up in steps of a sixteenth of it to
  // twice it (and within the machine's memory), in which the plan moves the
  // fewest bytes (placement.h): none where it can (a tensor that grows chunk by
  // chunk may have to move anyway).
  uint64_t auto_arena_bytes(const Plan& plan, int64_t batch, uint64_t peak) const;
  std::vector<StepRecord> step_records_;       // the run's steps, reused from run to run
  std::vector<std::string> layer_names_json_;  // each layer's name as a JSON string, quoted and escaped
};

}  // namespace frugal::cpu
