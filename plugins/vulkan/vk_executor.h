// One Vulkan executor instance: a compiled model, its weights on the device,
// the activation arena (one device buffer of exactly the budget), and the
// operations of the executor ABI (describe, layer_bytes, set_budget, run,
// time_layer) in C++. plugin_entry.cpp only translates to and from this class.
//
// A run takes any valid plan (steps "layer k on samples [s, s+n)", the cpu
// executor's JSON) with the cpu executor's accounting: the plan is placed
// offline by the common memory model over the compacting offset allocator
// (plugins/common/placement.h), and the command buffer is recorded with the
// offsets found there, the allocator's compactions becoming buffer copies.
// The recording is kept and replayed while (batch, arena, plan) stay the same.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/gate_activity.h"
#include "common/gate_params.h"
#include "common/io_checks.h"
#include "common/placement.h"
#include "common/plan.h"
#include "common/plan_memory.h"
#include "frugal/executor_sdk.hpp"
#include "frugal/plugin.h"
#include "frugal/plugin_sdk.hpp"
#include "vk_device.h"
#include "vk_model.h"

namespace frugal::vk {

using exec::format_bytes;  // "12.3 MB (12345678 bytes)"

// Work groups a conv dispatch should have before its reduction is left whole,
// on GPUs (docs/VULKAN.md, "Split-K"): on an H100 every network's conv time fell
// from 256 to 512, 1024 and 2048 (resnet18 at batch 1: 1.71, 1.22, 1.03, 0.96
// ms), since a split still keeps slices of at least 64 (kMinSlice).
constexpr int64_t kDefaultMinGroups = 2048;
// Milliseconds of device time a layer runs before time_layer times it (the
// option warm_up_ms; docs/VULKAN.md, "Clock state").
constexpr double kDefaultWarmUpMs = 5.0;
using exec::Placement;
using exec::Plan;
using exec::PlanStep;

struct ExecutorOptions {
  int device = -1;          // {"device": N}; -1: FRUGAL_VULKAN_DEVICE, else the best by type
  std::string shader_dir;   // {"shader_dir": ...}; else FRUGAL_SHADER_DIR, else an install's
                            // share/frugal/shaders next to the plugin, else the build's shaders/
  bool dense_conv = false;  // {"conv": "dense"}: plain conv dispatch; default "indirect" (gating-ready)
  WinogradMode winograd = WinogradMode::Auto;  // {"winograd": "auto" | "off" | "f23" | "f43"}
  // {"weight_storage": "fp32" | "fp16"}: the kernels of one-group convs (direct and
  // Winograd) and a Gemm/MatMul's constant B as float32 (the default) or as
  // halves (docs/VULKAN.md, "fp16 weights").
  WeightStorage weight_storage = WeightStorage::F32;
  // {"conv_texel": "auto" | "on" | "off"}: one-group and depthwise convs that qualify read
  // their operands as texels (conv_texel.comp; docs/VULKAN.md, "Texel
  // operands"); "auto" (or not given): env FRUGAL_VULKAN_CONV_TEXEL, else on for CPU devices only.
  std::string conv_texel = "auto";
  // {"gate_passes": "auto" | "flat" | "groups"}: a gated conv's passes over its
  // input and gate (pool, switches, zero planes) with one invocation per plane
  // or kernel ("flat") or a work group each ("groups"); "auto": flat on CPU devices only.
  std::string gate_passes = "auto";
  // {"min_groups": N}: convs whose dispatch has fewer work groups split their
  // reduction (0: never); -1: env FRUGAL_VULKAN_MIN_GROUPS, else kDefaultMinGroups
  // on GPUs and 0 on CPU devices (lavapipe).
  int64_t min_groups = -1;
  // {"conv_step": 8 | 16 | 32}: the reduction depth a tiled conv stages per
  // barrier where its reduction is at least 256 long; -1: 32 on CPU devices (a
  // barrier there switches every SIMD row of the work group), 8 on GPUs.
  int64_t conv_step = -1;
  // {"warm_up_ms": X}: before timing a layer (time_layer), run it back to back for
  // about X ms of device time in the same submission, so a GPU that idled is at
  // its working clock; 0: one untimed run only. -1: env FRUGAL_VULKAN_WARM_UP_MS, else 5.
  double warm_up_ms = -1;
  std::string
      pipeline_cache;  // {"pipeline_cache": false | "file"}; default the per-device file in the cache folder
  // {"staged_io": false}: inputs and outputs in submissions of their own, as
  // when they do not fit in the staging buffer (tests); default: inside the run's.
  bool staged_io = true;
  uint64_t max_binding_bytes = 0;  // {"max_binding_bytes": N}: smaller windows than the device allows (tests)
  double timeout_s = kDefaultWaitSeconds;  // {"timeout_s": N}: longest wait for one submission
  bool validation = false;                 // env FRUGAL_VULKAN_VALIDATION
  std::optional<float> gate_threshold;  // {"gate_threshold": T}, T in [0, 1]: replaces every gate's threshold
  exec::GateActivity gate_activity;     // {"gate_activity": ...}: time_layer's stated activity
  // Unknown keys are ignored ("threads" means nothing here). Throws frugal::Error.
  static ExecutorOptions parse(const char* json);
};

class Executor {
 public:
  // `done`, when given, hears of each weight the host lent by address as soon
  // as the model holds its copy (create_releasing, plugin.h).
  Executor(const void* onnx, size_t size, const ExecutorOptions& options, const sdk::WeightDone& done = {});
  // From the ABI's options JSON (may be NULL): what the plugin entry calls.
  Executor(const void* onnx, size_t size, const char* options_json, const sdk::WeightDone& done = {})
      : Executor(onnx, size, ExecutorOptions::parse(options_json), done) {}
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  const Model& model() const { return model_; }
  Device& device() const { return *device_; }
  std::string describe_json() const;
  frugal_layer_bytes layer_bytes(int layer, int batch) const;
  // Refused (FRUGAL_ERR_OUT_OF_MEMORY, nothing changed) above the device's
  // largest device-local heap or its maxMemoryAllocationSize.
  void set_budget(uint64_t bytes);
  // Runs `plan_json` (NULL: the whole batch, layer by layer). Returns the report JSON.
  // A lost device or a submission that outlasts timeout_s fails the run with
  // FRUGAL_ERR_DEVICE; the executor then refuses every call that needs the
  // device (a new executor gets a new device). Test hook: env
  // FRUGAL_VULKAN_FAULT=device_lost|timeout, read at each run, makes the run's
  // submission report that fault (Fault in vk_device.h).
  std::string run(const char* plan_json, const frugal_tensor* inputs, size_t n_inputs, frugal_tensor* outputs,
                  size_t n_outputs);
  void time_layer(int layer, int batch, int repeats, double& median, double& spread);
  // FRUGAL_EXT_PLACEMENT (plugin.h): the moves a plan makes (the same offline
  // placement run records), and what a recorded move costs on the device.
  std::string place_json(const char* plan_json, int32_t batch, uint64_t capacity) const;
  double time_move(uint64_t capacity, int32_t repeats);  // seconds per byte

  // Gates for the Conv layer `layer`: n samples x M kernel values (row-major);
  // kernels with a value above threshold are computed, the others read 0. The
  // next runs must have n samples. clear_gates makes the layer dense again.
  void set_gates(int layer, int64_t n, const std::vector<float>& values, float threshold);
  void clear_gates(int layer);

  // Validation-layer errors since this executor was created (0 without validation).
  uint64_t validation_errors() const;
  // Layers whose conv reduction is split (split-K).
  int64_t split_layers() const;
  // Layers that read their operands as texels (option conv_texel).
  int64_t texel_layers() const;

 private:
  struct Recording;
  void check_validation(const std::string& what) const;
  // Throws FRUGAL_ERR_DEVICE when the device failed (here or in another
  // executor sharing it), after freeing the arena where that is safe.
  void refuse_if_device_failed(const std::string& what);
  // After the device failed during `what`: frees the arena (lost device) or
  // holds it until destruction (timeout: the device may still use it), then
  // throws the device's failure with what became of the arena.
  [[noreturn]] void fail_after_device_failure(const std::string& what, const sdk::Failure& cause,
                                              Buffer& temporary);
  void release_after_failure(Buffer& temporary);
  VkQueryPool query_pool(uint32_t queries);
  // Per-repetition seconds of `record_one`'s commands: a warm-up submission,
  // then, in one submission, the commands back to back for about 5 ms of GPU
  // time (the clock boosts) and `repeats` of them between timestamps (or, on a
  // queue without timestamps, one submission each, by the wall clock).
  std::vector<double> time_commands(int repeats, const std::function<void(Recorder&)>& record_one);
  // Seconds between the timestamp pairs of queries [first, first + queries).
  // Seconds between pairs of stamps [first + 2i, first + 2i + 1]; chained: each
  // interval from the previous pair's end instead (the first from its start).
  std::vector<double> read_timestamps(uint32_t queries, uint32_t first = 0, bool chained = false) const;
  // Per layer, what its model gate did over a run of `plan` (on: kernels switched on per layer).
  std::vector<exec::GateStats> gate_stats(const Plan& plan, const std::vector<uint32_t>& on) const;
  const Buffer& auto_arena(uint64_t capacity);
  // Host time of a run's parts, in the report: recording (0 when the last
  // run's was reused), submission to completion, reading the gate counts.
  struct HostPhases {
    double record = 0, submit = 0, gate_counts = 0;
  };
  void record_run(Recording& rec, const Plan& plan, const Placement& placed, const Buffer& arena,
                  int64_t batch);
  void plan_staged_copies(Recording& rec, const Placement& placed, int64_t batch) const;
  void submit_staged(const Recording& rec, const std::vector<const frugal_tensor*>& ins,
                     const std::vector<frugal_tensor*>& outs, Fault fault);
  // Layer l on n samples: per head-node input the byte offset of its first
  // sample (constants: ignored), the output's and the workspace's offsets.
  LayerIO layer_io(int l, int64_t n, const std::vector<uint64_t>& in_offsets, uint64_t out_offset,
                   uint64_t ws_offset, const Buffer& arena) const;

  ExecutorOptions options_;
  Model model_;
  std::shared_ptr<Device> device_;
  ShaderSet shaders_;
  Buffer weights_;
  std::vector<Region> weight_blocks_;       // per layer
  Buffer arena_;                            // the budget's, while one is set
  Buffer auto_arena_;                       // without a budget: the last run's, exactly its plan's peak
  std::vector<Buffer> held_after_timeout_;  // arenas a hung device may still be using
  uint64_t budget_ = 0;
  bool budget_set_ = false;
  VkCommandPool command_pool_ = VK_NULL_HANDLE;
  VkQueryPool query_pool_ = VK_NULL_HANDLE;
  uint32_t query_capacity_ = 0;
  std::unique_ptr<Recording> recording_;
  uint64_t validation_base_ = 0;
  struct GateState {
    Buffer buffer;
    Gating gating;
  };
  std::map<int, std::unique_ptr<GateState>> gates_;
  // Per layer one uint: the kernels its model gate switched on during a run
  // (zeroed at the start of each recorded run, read after it).
  Buffer gate_counts_;
  bool has_model_gates_ = false;
};

}  // namespace frugal::vk
