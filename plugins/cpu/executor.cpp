#include "executor.h"

#include <cblas.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <nlohmann/json.hpp>
#include <string_view>
#include <thread>

#include "cache_evict.h"
#include "common/gate_report.h"
#include "common/placement.h"
#include "frugal/error.h"
#include "frugal/model/onnx_import.h"
#include "frugal/plugin_sdk.hpp"
#include "kernels/conv_onednn.h"
#include "kernels/kernel_util.h"

namespace frugal::cpu {

using exec::SampleStore;

namespace {

int cores_present() {
  const unsigned c = std::thread::hardware_concurrency();
  return c == 0 ? 1 : int(c);
}

// Half the last-level cache of cpu0 (sysfs "32768K"), the part one request's
// steps may count on while the rest holds weights and other processes' lines.
uint64_t default_cache_bytes() {
  uint64_t best = 0;
  for (int index = 0; index < 8; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index) + "/";
    std::FILE* f = std::fopen((dir + "size").c_str(), "r");
    if (!f) break;
    unsigned long long value = 0;
    char unit = 0;
    const int got = std::fscanf(f, "%llu%c", &value, &unit);
    std::fclose(f);
    if (got < 1) continue;
    const uint64_t bytes = unit == 'K' ? value << 10 : unit == 'M' ? value << 20 : value;
    best = std::max<uint64_t>(best, bytes);
  }
  return best > 0 ? best / 2 : uint64_t(8) << 20;
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

ExecutorOptions ExecutorOptions::parse(const char* json) {
  ExecutorOptions o;
  const int cores = cores_present();
  o.threads = cores;
  const nlohmann::json j = exec::parse_options_object(json, "{\"threads\": 2}");
  if (j.contains("threads")) {
    const auto& t = j["threads"];
    if (!t.is_number_integer()) throw Error("option 'threads' must be an integer, got " + t.dump());
    const int64_t v = t.get<int64_t>();
    if (v < 1 || v > 4 * int64_t(cores))
      throw Error("option 'threads' = " + std::to_string(v) + " is out of range: this machine has " +
                  std::to_string(cores) + " core" + (cores == 1 ? "" : "s") + ", so 1.." +
                  std::to_string(4 * cores) + " threads are allowed");
    o.threads = int(v);
  }
  if (j.contains("conv")) {
    const auto& c = j["conv"];
    if (!c.is_string() || (c != "auto" && c != "blas" && c != "onednn"))
      throw Error("option 'conv' must be \"auto\", \"blas\" or \"onednn\", got " + c.dump());
    o.conv.path = c.get<std::string>();
    if (o.conv.path == "onednn" && !onednn_available())
      throw Error("option 'conv' = \"onednn\": this build has no oneDNN (libdnnl-dev)");
  }
  if (j.contains("winograd")) {
    const auto& wg = j["winograd"];
    if (!wg.is_string() || (wg != "auto" && wg != "off"))
      throw Error("option 'winograd' must be \"auto\" or \"off\", got " + wg.dump());
    o.conv.winograd = wg == "auto";
  }
  if (j.contains("residual_add")) {
    const auto& r = j["residual_add"];
    if (!r.is_string() || (r != "fused" && r != "separate"))
      throw Error("option 'residual_add' must be \"fused\" or \"separate\", got " + r.dump());
    o.conv.residual_add = r == "fused";
  }
  if (j.contains("se_scale")) {
    const auto& r = j["se_scale"];
    if (!r.is_string() || (r != "fused" && r != "separate"))
      throw Error("option 'se_scale' must be \"fused\" or \"separate\", got " + r.dump());
    o.conv.se_scale = r == "fused";
  }
  if (j.contains("gate_threshold")) {
    const auto& t = j["gate_threshold"];
    if (!t.is_number() || !(t.get<double>() >= 0.0 && t.get<double>() <= 1.0))
      throw Error("option 'gate_threshold' must be a number in [0, 1], got " + t.dump());
    o.gate_threshold = t.get<float>();
  }
  if (j.contains("gate_activity")) o.gate_activity = exec::GateActivity::parse(j["gate_activity"]);
  if (j.contains("time_layer")) {
    const auto& t = j["time_layer"];
    if (!t.is_string() || (t != "cold" && t != "cold_inputs" && t != "warm"))
      throw Error("option 'time_layer' must be \"cold\", \"cold_inputs\" or \"warm\", got " + t.dump());
    o.time_layer = t == "warm"          ? ExecutorOptions::TimeLayer::warm
                   : t == "cold_inputs" ? ExecutorOptions::TimeLayer::cold_inputs
                                        : ExecutorOptions::TimeLayer::cold;
  }
  if (j.contains("schedule")) {
    const auto& sc = j["schedule"];
    if (!sc.is_string() || (sc != "cache" && sc != "whole"))
      throw Error("option 'schedule' must be \"cache\" or \"whole\", got " + sc.dump());
    o.cache_schedule = sc == "cache";
  }
  if (j.contains("cache_bytes")) {
    const auto& cb = j["cache_bytes"];
    if (!cb.is_number_integer() || cb.get<int64_t>() < 1)
      throw Error("option 'cache_bytes' must be a positive integer, got " + cb.dump());
    o.cache_bytes = cb.get<uint64_t>();
  } else {
    o.cache_bytes = default_cache_bytes();
  }
  return o;
}

Executor::Executor(const void* onnx, size_t size, const ExecutorOptions& options, const sdk::WeightDone& done)
    : model_(load_onnx_bytes(onnx, size, "model", true, done), options.threads, options.gate_threshold,
             options.conv),
      options_(options),
      pool_(options.threads) {}

// OpenBLAS runs single-threaded inside the executor's own threads (see thread_pool.h).
void Executor::use_threads() const { openblas_set_num_threads(1); }

std::string Executor::describe_json() const {
  using nlohmann::json;
  const Model& m = model_;
  json d = exec::describe_graph(m, [&](int l) { return m.kernel(l).algorithm(); });
  d["device"] = "cpu (OpenBLAS " + std::to_string(options_.threads) + " thread" +
                (options_.threads == 1 ? "" : "s") + ")";
  d["threads"] = options_.threads;
  d["conv"] = options_.conv.path;
  d["winograd"] = options_.conv.winograd ? "auto" : "off";
  d["residual_add"] = options_.conv.residual_add ? "fused" : "separate";
  d["se_scale"] = options_.conv.se_scale ? "fused" : "separate";
  d["schedule"] = options_.cache_schedule ? "cache" : "whole";
  d["cache_bytes"] = options_.cache_bytes;
  using TL = ExecutorOptions::TimeLayer;
  const TL tl = options_.time_layer;
  d["time_layer"] = tl == TL::cold_inputs ? "cold_inputs" : tl == TL::cold ? "cold" : "warm";
  d["packed_weights_bytes"] = m.packed_weight_bytes();
  if (!options_.gate_activity.given.is_null()) d["gate_activity"] = options_.gate_activity.given;
  return d.dump();
}

frugal_layer_bytes Executor::layer_bytes(int layer, int batch) const {
  exec::check_layer_and_batch(model_, "layer_bytes", layer, batch);
  return model_.layer_bytes(layer, batch);
}

namespace {

// The machine's memory (0: unknown).
uint64_t machine_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? uint64_t(pages) * uint64_t(page) : 0;
}

// An arena larger than the machine's memory cannot be meant (a corrupt model can
// ask for petabytes, and a sanitizer build would abort on the allocation).
void refuse_more_than_machine(uint64_t bytes, const std::string& what) {
  const uint64_t machine = machine_bytes();
  if (machine > 0 && bytes > machine)
    throw sdk::Failure(
        FRUGAL_ERR_OUT_OF_MEMORY,
        what + format_bytes(bytes) + ", more than this machine's memory (" + format_bytes(machine) + ")");
}

}  // namespace

void Executor::set_budget(uint64_t bytes) {
  refuse_more_than_machine(bytes, "set_budget: the budget is ");
  budget_set_ = false;
  arena_.reset(bytes);
  budget_set_ = true;
}

uint64_t Executor::auto_arena_bytes(const Plan& plan, int64_t batch, uint64_t peak) const {
  constexpr int kSteps = 16;
  const uint64_t machine = machine_bytes();
  uint64_t best = peak, least_moved = UINT64_MAX;
  for (int k = 0; k <= kSteps && least_moved > 0; ++k) {
    const uint64_t capacity = peak + peak / kSteps * uint64_t(k);
    if (k > 0 && machine > 0 && capacity > machine) break;  // never more than the machine holds
    const uint64_t moved = exec::place_plan(model_, plan, batch, capacity).moved_bytes;
    if (moved < least_moved) {
      least_moved = moved;
      best = capacity;
    }
  }
  return best;
}

Plan Executor::default_plan(int64_t batch) const {
  return options_.cache_schedule ? exec::cache_blocked_plan(model_, batch, options_.cache_bytes)
                                 : exec::whole_batch_plan(model_, batch);
}

PlanMemory Executor::simulate(const Plan& plan, int64_t batch) const {
  return exec::simulate_plan(model_, plan, batch);
}

std::string Executor::place_json(const char* plan_json, int32_t batch, uint64_t capacity) const {
  const Plan plan = plan_json ? exec::parse_plan(plan_json, model_) : default_plan(batch);
  return exec::placement_summary_json(model_, plan, batch, capacity);
}

double Executor::time_move(uint64_t capacity, int32_t repeats) const {
  return Arena::time_slide(capacity, repeats);
}

int Executor::run_step(const PlanStep& s, const SampleStore& store, float* out, float* ws,
                       exec::GateStats* stats) const {
  const Model& m = model_;
  const Layer& L = m.layers()[size_t(s.layer)];
  KernelArgs args;
  args.pool = &pool_;
  args.in_dims = m.call_dims(s.layer, s.count);
  for (int t : L.node_inputs) {
    if (t < 0) {
      args.in.push_back(nullptr);
      continue;
    }
    const SampleStore::Piece& p = store.input_piece(t, s);  // all the step's samples, in one block
    args.in.push_back(arena_.data(p.chunk) + (s.first - p.first) * m.tensors()[size_t(t)].sample_elems);
  }
  args.out = out;
  args.out_dims = m.dims_at(L.output, s.count);
  args.ws = ws;
  args.gate_stats = stats;
  if (product(args.out_dims) == 0) return 0;  // an empty output: nothing to compute
  m.kernel(s.layer).run(args);
  return 1;
}

std::string Executor::run(const char* plan_json, const frugal_tensor* inputs, size_t n_inputs,
                          frugal_tensor* outputs, size_t n_outputs) {
  const Model& m = model_;
  const exec::Request req = exec::check_io(m, inputs, n_inputs, outputs, n_outputs);
  const std::vector<const frugal_tensor*>& ins = req.inputs;
  const std::vector<frugal_tensor*>& outs = req.outputs;
  const int64_t batch = req.batch;
  const std::string_view plan_text = plan_json ? std::string_view(plan_json) : std::string_view();
  PlanCache& cache = plan_cache_;
  if (!cache.valid || cache.batch != batch || cache.plan_text != plan_text) {
    cache.valid = false;
    cache.plan = plan_json ? exec::parse_plan(plan_json, m) : default_plan(batch);
    cache.memory = simulate(cache.plan, batch);  // validates the plan
    cache.auto_arena_bytes = 0;                  // found on the first run without a budget
    cache.plan_text = plan_text;
    cache.batch = batch;
    cache.valid = true;
  }
  const Plan& plan = cache.plan;
  const PlanMemory predicted = cache.memory;
  const bool auto_budget = !budget_set_;
  if (auto_budget) {
    refuse_more_than_machine(predicted.peak, "run: this run needs ");
    // No budget given: the least block in which this plan moves the fewest
    // bytes (at an exact peak, ResNet-50 at batch 8 moved 90 MB a run). A block
    // of that size is kept for the next run: mapping it afresh costs a page
    // fault per 4 KiB written, in every run (MobileNet-V2 at batch 12: 131
    // against 88 ms).
    if (cache.auto_arena_bytes == 0) cache.auto_arena_bytes = auto_arena_bytes(plan, batch, predicted.peak);
    if (arena_.capacity() != cache.auto_arena_bytes) arena_.reset(cache.auto_arena_bytes);
  } else if (predicted.peak > arena_.capacity())
    exec::check_budget(m, plan, batch, arena_.capacity());  // throws, naming the step that does not fit

  const ThreadPool::Busy busy(pool_);  // wakes the workers now; they spin until the run ends
  use_threads();
  const double t0 = now_seconds();
  arena_.clear();
  if (exec::arena_sentinel_on()) arena_.fill_sentinel();
  SampleStore store(m, arena_, batch);
  const std::vector<ChunkMemory::Id> in_chunks = store.place_inputs();
  for (size_t k = 0; k < ins.size(); ++k)
    if (ins[k]->bytes) std::memcpy(arena_.data(in_chunks[k]), ins[k]->data, ins[k]->bytes);
  store.drop_unread_inputs();
  std::vector<StepRecord>& steps = step_records_;
  steps.clear();
  steps.reserve(plan.steps.size());
  std::vector<exec::GateStats> gate_stats(m.layers().size());
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep& s = plan.steps[i];
    const double ts = now_seconds();
    const uint64_t moved_before = arena_.moved_bytes();
    const double move_s_before = arena_.move_seconds();
    ChunkMemory::Id ws = 0;
    bool has_ws = false;
    const ChunkMemory::Id out = store.begin_step(s, m.layer_bytes(s.layer, s.count).ws_bytes, ws, has_ws);
    // Addresses only now: the allocations above may have moved chunks.
    const int calls = run_step(s, store, arena_.data(out), has_ws ? arena_.data(ws) : nullptr,
                               &gate_stats[size_t(s.layer)]);
    store.end_step(s, out, ws, has_ws);
    StepRecord& r = steps.emplace_back();
    r.layer = s.layer;
    r.first = s.first;
    r.count = s.count;
    r.calls = calls;
    r.moved_bytes = arena_.moved_bytes() - moved_before;
    r.move_seconds = arena_.move_seconds() - move_s_before;
    r.seconds = now_seconds() - ts;
  }
  for (size_t k = 0; k < outs.size(); ++k) {
    const int t = m.outputs()[k];
    const uint64_t sb = m.sample_bytes(t);
    for (const SampleStore::Piece& p : store.pieces(t))
      if (sb)
        std::memcpy(static_cast<char*>(outs[k]->data) + uint64_t(p.first) * sb, arena_.data(p.chunk),
                    uint64_t(p.count) * sb);
  }
  const double seconds = now_seconds() - t0;
  const uint64_t peak = arena_.peak_bytes();
  nlohmann::json report = {{"peak_bytes", peak},
                           {"predicted_peak_bytes", predicted.peak},
                           {"budget_bytes", arena_.capacity()},
                           {"packed_weights_bytes", m.packed_weight_bytes()},
                           {"auto_budget", auto_budget},
                           {"batch", batch},
                           {"seconds", seconds},
                           {"compactions", arena_.compactions()},
                           {"moved_bytes", arena_.moved_bytes()}};
  if (exec::arena_sentinel_on()) report["touched_bytes"] = arena_.touched_bytes();
  const nlohmann::json gates = exec::gate_report(m, gate_stats);
  if (!gates.empty()) report["gates"] = gates;
  store.release_all();
  arena_.clear();
  return report_json(report);
}

namespace {

template <typename T>
void append_number(std::string& s, T v) {
  char b[32];
  const std::to_chars_result r = std::to_chars(b, b + sizeof b, v);  // shortest round-trip form
  s.append(b, r.ptr);
}

}  // namespace

// The report's "steps" written as text straight from the records: as a JSON
// object per step (built, copied and dumped) they cost EfficientNet-B0's 125
// steps about 0.2 ms a run at batch 1, a share of a run of 14 ms.
std::string Executor::report_json(const nlohmann::json& head) {
  const Model& m = model_;
  if (layer_names_json_.size() != m.layers().size()) {
    layer_names_json_.clear();
    for (const Layer& L : m.layers()) layer_names_json_.push_back(nlohmann::json(L.name).dump());
  }
  std::string s = head.dump();
  s.pop_back();  // the closing brace: "steps" follows
  s.reserve(s.size() + 160 * step_records_.size() + 16);
  s += head.empty() ? "\"steps\":[" : ",\"steps\":[";
  for (size_t i = 0; i < step_records_.size(); ++i) {
    const StepRecord& r = step_records_[i];
    s += i ? ",{\"calls\":" : "{\"calls\":";
    append_number(s, r.calls);
    s += ",\"count\":";
    append_number(s, r.count);
    s += ",\"first\":";
    append_number(s, r.first);
    s += ",\"layer\":";
    s += layer_names_json_[size_t(r.layer)];
    s += ",\"move_seconds\":";
    append_number(s, r.move_seconds);
    s += ",\"moved_bytes\":";
    append_number(s, r.moved_bytes);
    s += ",\"seconds\":";
    append_number(s, r.seconds);
    s += '}';
  }
  s += "]}";
  return s;
}

void Executor::time_layer(int layer, int batch, int repeats, double& median, double& spread) {
  const Model& m = model_;
  exec::check_time_layer(m, layer, batch, repeats);
  const Layer& L = m.layers()[size_t(layer)];
  const frugal_layer_bytes need = m.layer_bytes(layer, batch);
  const uint64_t total = need.in_bytes + need.out_bytes + need.ws_bytes;
  Arena local;
  Arena* arena = &arena_;
  if (!budget_set_) {
    local.reset(total);
    arena = &local;
  } else if (total > arena_.capacity()) {
    throw sdk::Failure(FRUGAL_ERR_BUDGET, "time_layer: layer '" + L.name + "' at batch " +
                                              std::to_string(batch) + " needs " + format_bytes(total) +
                                              ", budget is " + format_bytes(arena_.capacity()));
  }
  arena->clear();
  // Synthetic inputs: a fixed pseudo-random pattern in [-1, 1); a gate's
  // consumer at a stated activity gets the off channels of input 0 as zeros.
  const std::optional<double> activity = options_.gate_activity.of(L.name);
  std::vector<ChunkMemory::Id> in_ids;
  uint32_t state = 12345u;
  for (int t : L.inputs) {
    const ChunkMemory::Id id = arena->alloc(m.bytes(t, batch));
    float* p = arena->data(id);
    const int64_t count = m.tensors()[size_t(t)].sample_elems * batch;
    for (int64_t i = 0; i < count; ++i) {
      state = state * 1664525u + 1013904223u;
      p[i] = float(state >> 8) / float(1u << 23) - 1.0f;
    }
    if (activity && L.skips_off_channels && L.zero_block > 0 && t == L.node_inputs[0])
      exec::zero_off_channels(p, batch, m.tensors()[size_t(t)].sample_elems / L.zero_block, L.zero_block,
                              *activity);
    in_ids.push_back(id);
  }
  const ChunkMemory::Id out = arena->alloc(need.out_bytes);
  const bool has_ws = need.ws_bytes > 0;
  const ChunkMemory::Id ws = has_ws ? arena->alloc(need.ws_bytes) : 0;
  KernelArgs args;
  args.pool = &pool_;
  args.in_dims = m.call_dims(layer, batch);
  for (int t : L.node_inputs) {
    if (t < 0) {
      args.in.push_back(nullptr);
      continue;
    }
    const size_t k = size_t(std::find(L.inputs.begin(), L.inputs.end(), t) - L.inputs.begin());
    args.in.push_back(arena->data(in_ids[k]));
  }
  args.out = arena->data(out);
  args.out_dims = m.dims_at(L.output, batch);
  args.ws = has_ws ? arena->data(ws) : nullptr;
  if (activity && L.gate_kernels > 0) args.gate_activity = *activity;
  const ThreadPool::Busy busy(pool_);  // as in a run: workers spin between calls
  use_threads();
  const Kernel& kernel = m.kernel(layer);
  kernel.run(args);  // warm-up
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    using TL = ExecutorOptions::TimeLayer;
    if (options_.time_layer != TL::warm) {  // output and workspace out of cache, as in a run (cache_evict.h)
      flush_from_cache(args.out, need.out_bytes);
      if (has_ws) flush_from_cache(args.ws, need.ws_bytes);
      if (options_.time_layer == TL::cold_inputs)
        for (size_t k = 0; k < in_ids.size(); ++k)
          flush_from_cache(arena->data(in_ids[k]), m.bytes(L.inputs[k], batch));
    }
    const double t0 = now_seconds();
    kernel.run(args);
    times.push_back(now_seconds() - t0);
  }
  exec::median_and_spread(times, median, spread);
  arena->clear();
}

}  // namespace frugal::cpu
