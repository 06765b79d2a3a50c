#include "profiler/profiler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <vector>

#include "frugal/error.h"
#include "profiler/batch_fill.h"
#include "profiler/cost_cache.h"
#include "profiler/cost_facts.h"
#include "profiler/move_price.h"
#include "profiler/profile_passes.h"
#include "tensor/tensor_random.h"

namespace frugal {

namespace {

constexpr int kMaxBatch = 1024;  // the planner's limit too
constexpr int kMoveRepeats = 9;  // timed slides for the move price (docs/COSTS.md, "Moves")

double now_seconds() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

std::string layer_name(const nlohmann::json& layer, size_t i) {
  if (layer.is_object() && layer.contains("name") && layer["name"].is_string())
    return layer["name"].get<std::string>();
  throw Error("executor describe(): layer " + std::to_string(i) + " has no name");
}

nlohmann::json layer_inputs(const nlohmann::json& layer, const std::string& name) {
  if (!layer.contains("inputs") || !layer["inputs"].is_array())
    throw Error("executor describe(): layer '" + name + "' has no \"inputs\" list");
  for (const auto& in : layer["inputs"])
    if (!in.is_string())
      throw Error("executor describe(): layer '" + name + "' has a non-string input " + in.dump());
  return layer["inputs"];
}

}  // namespace

std::vector<int> measured_batch_list(const ProfileOptions& opt) {
  if (opt.batch_max < 1 || opt.batch_max > kMaxBatch)
    throw Error("profile: the largest batch size must be in 1.." + std::to_string(kMaxBatch) + ", got " +
                std::to_string(opt.batch_max));
  std::vector<int> b = opt.batches;
  if (b.empty())
    for (int i = 1; i <= opt.batch_max; ++i) b.push_back(i);
  for (int x : b)
    if (x < 1 || x > opt.batch_max)
      throw Error("profile: batch size " + std::to_string(x) + " is outside 1.." +
                  std::to_string(opt.batch_max));
  std::sort(b.begin(), b.end());
  b.erase(std::unique(b.begin(), b.end()), b.end());
  return b;
}

namespace {

// What describe() says about the model that the table needs, and the plugin file it came from.
struct ExecutorFacts {
  const nlohmann::json* layers = nullptr;
  std::string device;
  const nlohmann::json* threads = nullptr;  // absent: null in the table
  nlohmann::json threads_value() const { return threads ? *threads : nlohmann::json(nullptr); }
  nlohmann::json gate_activity;  // the stated activity gated layers were timed at (null: their gates decided)
  nlohmann::json time_layer;     // how layers are timed ("cold" / "warm" on the CPU; null: not said)
  // Output tensors of the network: the executors keep those to the end even
  // when another layer reads them, so the table must say so.
  std::vector<std::string> network_outputs;
  nlohmann::json plugin_build;  // the plugin's file as built (plugin_build_stamp; null: unknown)
};

// The executor plugin's file as built: its size and modification time. A kernel
// change that leaves describe() as it was (a prefetch, a better loop) must not
// reuse timings of the old kernel: `make run` after such a change predicted a
// Gemm at 2.6x its new time from a cached table.
nlohmann::json plugin_build_stamp(const std::string& file) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(file, ec);
  if (ec) return nullptr;
  const auto mtime = std::filesystem::last_write_time(file, ec);
  if (ec) return nullptr;
  return {{"bytes", uint64_t(size)}, {"mtime", int64_t(mtime.time_since_epoch().count())}};
}

ExecutorFacts read_executor_facts(ExecutorClient& ex, const std::vector<int>& batches) {
  const nlohmann::json& d = ex.describe();
  if (!d.contains("layers") || !d["layers"].is_array() || d["layers"].empty())
    throw Error("executor describe(): no \"layers\" to profile");
  if (d.contains("batched") && d["batched"] == false && batches.back() > 1)
    throw Error(
        "profile: the executor cannot batch this model (" +
        (d.contains("not_batched_reason") ? d["not_batched_reason"].dump() : std::string("no reason given")) +
        "): only batch size 1 can be measured");
  ExecutorFacts f;
  f.layers = &d["layers"];
  f.plugin_build = plugin_build_stamp(ex.plugin().file);
  f.device = d.contains("device") && d["device"].is_string() ? d["device"].get<std::string>() : "";
  if (d.contains("threads")) f.threads = &d["threads"];
  if (d.contains("gate_activity")) f.gate_activity = d["gate_activity"];
  if (d.contains("time_layer")) f.time_layer = d["time_layer"];
  if (d.contains("outputs") && d["outputs"].is_array())
    for (const auto& o : d["outputs"])
      if (o.is_object() && o.contains("name") && o["name"].is_string())
        f.network_outputs.push_back(o["name"].get<std::string>());
  return f;
}

// Everything that makes a measurement what it is: a cache hit must match all of it.
nlohmann::json cache_key(const ProfileSubject& subject, const ExecutorFacts& f, const ProfileOptions& opt,
                         const std::vector<int>& batches) {
  nlohmann::json key = {
      // 3: step_overhead_s; 4: step_overhead_per_sample_s; 5: layers timed cold; 6: Vulkan warms up;
      // 7: run_overhead_s, and Vulkan steps timed from the previous step's end
      {"format", 7},
      {"model_hash", subject.model_hash},
      {"executor", subject.executor},
      {"device", f.device},
      {"threads", f.threads_value()},
      {"batch_max", opt.batch_max},
      {"batches", batches},
      {"repeats", opt.repeats},
      {"passes", opt.passes},
      // The executor's layers as it describes them (ops, kernel
      // paths): a table timed with other kernels is not reused.
      {"layers", *f.layers},
      {"plugin_build", f.plugin_build}};
  if (!f.gate_activity.is_null()) key["gate_activity"] = f.gate_activity;
  if (!f.time_layer.is_null()) key["time_layer"] = f.time_layer;  // a warm table is no cold one
  if (!opt.step_overhead) key["step_overhead"] = false;
  return key;
}

// in_bytes, out_bytes and ws_bytes of layer i for every batch 1..B, as the executor allocates them.
void add_layer_bytes(ExecutorClient& ex, int layer, int B, nlohmann::json& out) {
  nlohmann::json in_b = nlohmann::json::array(), out_b = nlohmann::json::array(),
                 ws_b = nlohmann::json::array();
  for (int b = 1; b <= B; ++b) {
    const LayerBytes lb = ex.layer_bytes(layer, b);
    in_b.push_back(lb.in_bytes);
    out_b.push_back(lb.out_bytes);
    ws_b.push_back(lb.ws_bytes);
  }
  out["in_bytes"] = in_b;
  out["out_bytes"] = out_b;
  out["ws_bytes"] = ws_b;
}

// One (layer, batch): repeats enough to rise above timer noise, and timed
// again (the smallest median kept) when a stall shows as a wide spread.
LayerTiming time_one(ExecutorClient& ex, int layer, int b, const ProfileOptions& opt) {
  int reps = repeats_per_pass(opt.repeats, opt.passes);
  const double min_seconds = opt.min_seconds / opt.passes;  // the passes together reach min_seconds
  LayerTiming t = ex.time_layer(layer, b, reps);
  if (t.median_seconds * reps < min_seconds && reps < opt.max_repeats) {
    const double each = std::max(t.median_seconds, 1e-7);
    const int more = static_cast<int>(std::min<double>(opt.max_repeats, std::ceil(min_seconds / each)));
    if (more > reps) t = ex.time_layer(layer, b, reps = more);
  }
  for (int attempt = 1;
       attempt < opt.max_attempts && t.spread_seconds > opt.max_relative_spread * t.median_seconds;
       ++attempt) {
    const LayerTiming again = ex.time_layer(layer, b, reps);
    if (again.median_seconds < t.median_seconds) t = again;
  }
  return t;
}

// Progress reports "layer i/n 'name' at batch b  [done/total]".
struct ProgressCounter {
  const ProfileOptions& opt;
  const ProfileSubject& subject;
  size_t layers = 0, done = 0, total = 0;
  void next(int pass, size_t layer, const std::string& name, int b) {
    if (opt.progress)
      opt.progress("profiling " + subject.model_name + " on " + subject.executor + ": layer " +
                       std::to_string(layer + 1) + "/" + std::to_string(layers) + " '" + name +
                       "' at batch " + std::to_string(b) + ", pass " + std::to_string(pass + 1) + "/" +
                       std::to_string(opt.passes) + "  [" + std::to_string(done + 1) + "/" +
                       std::to_string(total) + "]",
                   static_cast<double>(done) / static_cast<double>(total));
    ++done;
  }
};

// One pass: every (layer, batch) timed once; entry layer * batches + k.
void time_pass(ExecutorClient& ex, const ExecutorFacts& f, const std::vector<int>& batches, int pass,
               const ProfileOptions& opt, ProgressCounter& progress, FastestPass& best) {
  for (size_t i = 0; i < f.layers->size(); ++i) {
    const std::string name = layer_name((*f.layers)[i], i);
    for (size_t k = 0; k < batches.size(); ++k) {
      progress.next(pass, i, name, batches[k]);
      const LayerTiming t = time_one(ex, static_cast<int>(i), batches[k], opt);
      best.add(i * batches.size() + k, t.median_seconds, t.spread_seconds);
    }
  }
}

// time_s (per sample; unmeasured batch sizes interpolated), time_spread_s and source of layer i.
void add_layer_times(const FastestPass& best, size_t layer, const std::vector<int>& batches,
                     const ProfileOptions& opt, nlohmann::json& out) {
  std::map<int, double> per_batch, spread;
  for (size_t k = 0; k < batches.size(); ++k) {
    per_batch[batches[k]] = best.median(layer * batches.size() + k);
    spread[batches[k]] = best.spread(layer * batches.size() + k);
  }
  const std::vector<double> filled = fill_batch_times(per_batch, opt.batch_max);
  nlohmann::json time_s = nlohmann::json::array(), spread_s = nlohmann::json::array(),
                 source = nlohmann::json::array();
  for (int b = 1; b <= opt.batch_max; ++b) {
    const bool measured = per_batch.count(b) > 0;
    time_s.push_back(filled[static_cast<size_t>(b - 1)] / b);
    spread_s.push_back(measured ? spread[b] / b : 0.0);
    source.push_back(measured ? "measured" : "interpolated");
  }
  out["time_s"] = time_s;
  out["time_spread_s"] = spread_s;
  out["source"] = source;
}

nlohmann::json profile_layer(ExecutorClient& ex, const ExecutorFacts& f, size_t i,
                             const std::vector<int>& batches, const ProfileOptions& opt,
                             const FastestPass& best) {
  const nlohmann::json& L = (*f.layers)[i];
  const std::string name = layer_name(L, i);
  const int index = static_cast<int>(i);
  nlohmann::json out = {{"name", name}, {"inputs", layer_inputs(L, name)}};
  add_layer_times(best, i, batches, opt, out);
  add_layer_bytes(ex, index, opt.batch_max, out);
  if (L.contains("output_tensor") && L["output_tensor"].is_string() &&
      std::count(f.network_outputs.begin(), f.network_outputs.end(), L["output_tensor"].get<std::string>()))
    out["network_output"] = true;
  return out;
}

// Random inputs of the network at `batch`; none (nothing to run) for a scalar or symbolic input.
std::optional<std::vector<Tensor>> batch_inputs(ExecutorClient& ex, int batch) {
  std::vector<Tensor> inputs;
  uint64_t seed = 1;
  for (const auto& in : ex.describe().value("inputs", nlohmann::json::array())) {
    std::vector<int64_t> dims = in.value("shape", std::vector<int64_t>{});
    if (dims.empty()) return std::nullopt;  // a scalar input: no batch to speak of
    dims[0] = batch;
    for (int64_t d : dims)
      if (d < 1) return std::nullopt;  // a symbolic dimension: leave the overhead out
    Tensor t(dims);
    fill_uniform(t, seed++);
    inputs.push_back(std::move(t));
  }
  return inputs;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : 0.5 * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// One pass of the per-step overhead measurement (see the header): the network
// at `batch` as a plan of one step per layer, run `runs` times after a
// warm-up; per layer the median of its step's seconds goes into `best`.
// False when there is nothing to measure: an executor whose reports give no
// per-step seconds, or one that cannot run the plan (then with a warning).
bool step_seconds_pass(ExecutorClient& ex, const ExecutorFacts& f, int batch, int runs, FastestPass& best,
                       double& run_excess, std::string& warnings) {
  const size_t n = f.layers->size();
  nlohmann::json steps = nlohmann::json::array();
  for (size_t i = 0; i < n; ++i)
    steps.push_back({{"layer", layer_name((*f.layers)[i], i)}, {"first", 0}, {"count", batch}});
  const nlohmann::json plan = {{"batch", batch}, {"steps", steps}};
  const std::optional<std::vector<Tensor>> inputs = batch_inputs(ex, batch);
  if (!inputs) return false;
  std::vector<std::vector<double>> seconds(n);
  std::vector<double> excess;  // per run: its seconds beyond its steps'
  try {
    for (int r = 0; r <= runs; ++r) {  // r = 0: warm-up
      std::vector<Tensor> outputs;
      const nlohmann::json rep = ex.run(plan, *inputs, outputs);
      if (!rep.contains("steps") || !rep["steps"].is_array() || rep["steps"].size() != n) return false;
      double in_steps = 0;
      for (size_t k = 0; k < n; ++k) {
        const auto& st = rep["steps"][k];
        if (!st.contains("seconds") || !st["seconds"].is_number()) return false;
        if (r > 0) seconds[k].push_back(st["seconds"].get<double>());
        in_steps += st["seconds"].get<double>();
      }
      if (r > 0 && rep.contains("seconds") && rep["seconds"].is_number())
        excess.push_back(rep["seconds"].get<double>() - in_steps);
    }
  } catch (const Error& e) {
    warnings +=
        std::string(warnings.empty() ? "" : "\n") +
        "warning: the per-step overhead was not measured at batch " + std::to_string(batch) +
        " (the network, one step per layer, did not run: " + e.what() + ")" +
        (batch == 1 ? "; the table prices steps by time_s alone" : "; its per-sample part is left at 0");
    return false;
  }
  for (size_t k = 0; k < n; ++k) best.add(k, median_of(seconds[k]), 0.0);
  if (!excess.empty()) run_excess = std::min(run_excess, median_of(excess));
  return true;
}

// Per layer: its excess at batch 1 and (when measured) at batch B, split.
constexpr double kNoExcess = 1e300;  // no run measured

void add_step_overheads(const FastestPass& at1, const FastestPass* atB, int B, nlohmann::json& layers) {
  for (size_t k = 0; k < layers.size(); ++k) {
    const double d1 = at1.median(k) - layers[k]["time_s"][0].get<double>();
    const double dB = atB ? atB->median(k) - layers[k]["time_s"][size_t(B - 1)].get<double>() * B : d1;
    const StepOverhead o = split_step_overhead(d1, dB, atB ? B : 1);
    layers[k]["step_overhead_s"] = o.fixed_s;
    layers[k]["step_overhead_per_sample_s"] = o.per_sample_s;
  }
}

}  // namespace

StepOverhead split_step_overhead(double excess_1, double excess_B, int B) {
  StepOverhead o;
  o.fixed_s = std::max(0.0, excess_1);
  if (B > 1) {
    o.per_sample_s = std::max(0.0, (excess_B - excess_1) / (B - 1));
    o.fixed_s = std::max(0.0, excess_1 - o.per_sample_s);
  }
  return o;
}

ProfileResult profile_costs(ExecutorClient& ex, const ProfileSubject& subject, const ProfileOptions& opt) {
  const std::vector<int> batches = measured_batch_list(opt);
  if (opt.repeats < 1) throw Error("profile: repeats must be >= 1, got " + std::to_string(opt.repeats));
  if (opt.passes < 1) throw Error("profile: passes must be >= 1, got " + std::to_string(opt.passes));
  const ExecutorFacts facts = read_executor_facts(ex, batches);

  ProfileResult r;
  const nlohmann::json key = cache_key(subject, facts, opt, batches);
  const CostCache cache(opt.cache_dir);
  if (cache.enabled() && (opt.reuse_cache || opt.write_cache)) r.cache_file = cache.path_for(key);
  if (cache.enabled() && opt.reuse_cache) {
    if (auto hit = cache.load(key, &r.warnings)) {
      r.costs = std::move(*hit);
      // A table cached before moves were priced gets its price now (cheap), and keeps it.
      if (!r.costs.contains("move") && add_move_price(ex, kMoveRepeats, r.costs) && opt.write_cache)
        cache.store(key, r.costs, &r.warnings);
      add_executor_facts(r.costs, ex.describe());
      r.cached = true;
      return r;
    }
  }

  const double t0 = now_seconds();
  const size_t n = facts.layers->size();
  ProgressCounter progress{opt, subject, n, 0, n * batches.size() * size_t(opt.passes)};
  FastestPass best(n * batches.size()), step_best(n), step_best_B(n);
  bool overhead = opt.step_overhead, overhead_B = opt.step_overhead && opt.batch_max > 1;
  // A run's seconds beyond its steps, at batch 1 and B: the fastest pass's median.
  double run_excess_1 = kNoExcess, run_excess_B = kNoExcess;
  for (int pass = 0; pass < opt.passes; ++pass) {
    time_pass(ex, facts, batches, pass, opt, progress, best);
    if (!overhead) continue;
    if (opt.progress)
      opt.progress("profiling " + subject.model_name + ": per-step overhead in a run",
                   static_cast<double>(progress.done) / static_cast<double>(progress.total));
    overhead = step_seconds_pass(ex, facts, 1, opt.repeats, step_best, run_excess_1, r.warnings);
    if (overhead && overhead_B)
      overhead_B =
          step_seconds_pass(ex, facts, opt.batch_max, opt.repeats, step_best_B, run_excess_B, r.warnings);
  }
  nlohmann::json layers = nlohmann::json::array();
  for (size_t i = 0; i < n; ++i) layers.push_back(profile_layer(ex, facts, i, batches, opt, best));
  if (overhead) add_step_overheads(step_best, overhead_B ? &step_best_B : nullptr, opt.batch_max, layers);
  if (opt.progress) opt.progress("", 1.0);
  r.seconds = now_seconds() - t0;
  r.costs = {{"model", subject.model_name},
             {"model_hash", subject.model_hash},
             {"executor", subject.executor},
             {"device", facts.device},
             {"threads", facts.threads_value()},
             {"batch_max", opt.batch_max},
             {"measured_batches", batches},
             {"repeats", opt.repeats},
             {"passes", opt.passes},
             {"profile_seconds", r.seconds},
             {"layers", layers}};
  if (!facts.gate_activity.is_null()) r.costs["gate_activity"] = facts.gate_activity;
  if (opt.step_overhead && !layers.empty() && layers[0].contains("step_overhead_s"))
    r.costs["step_overhead"] = {
        {"measured_by", "the network at batch 1 and at batch_max, one step per layer"},
        {"batch", 1},
        {"per_sample_batch", overhead_B ? opt.batch_max : 1},
        {"runs", opt.repeats},
        {"passes", opt.passes}};
  if (overhead && run_excess_1 < kNoExcess) {
    const StepOverhead o = split_step_overhead(run_excess_1, overhead_B ? run_excess_B : run_excess_1,
                                               overhead_B ? opt.batch_max : 1);
    r.costs["run_overhead_s"] = o.fixed_s;
    r.costs["run_overhead_per_sample_s"] = o.per_sample_s;
  }
  add_move_price(ex, kMoveRepeats, r.costs);
  add_executor_facts(r.costs, ex.describe());
  if (opt.write_cache) cache.store(key, r.costs, &r.warnings);
  return r;
}

}  // namespace frugal
