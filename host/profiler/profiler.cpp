#include "profiler/profiler.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>

#include "frugal/error.h"
#include "profiler/batch_fill.h"
#include "profiler/cost_cache.h"

namespace frugal {

namespace {

constexpr int kMaxBatch = 1024;  // the planner's limit too

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

ProfileResult profile_costs(ExecutorClient& ex, const ProfileSubject& subject, const ProfileOptions& opt) {
  const std::vector<int> batches = measured_batch_list(opt);
  if (opt.repeats < 1) throw Error("profile: repeats must be >= 1, got " + std::to_string(opt.repeats));
  const int B = opt.batch_max;

  const nlohmann::json& d = ex.describe();
  if (!d.contains("layers") || !d["layers"].is_array() || d["layers"].empty())
    throw Error("executor describe(): no \"layers\" to profile");
  const nlohmann::json& layers = d["layers"];
  const std::string device =
      d.contains("device") && d["device"].is_string() ? d["device"].get<std::string>() : "";
  const nlohmann::json threads = d.contains("threads") ? d["threads"] : nlohmann::json(nullptr);
  if (d.contains("batched") && d["batched"] == false && batches.back() > 1)
    throw Error(
        "profile: the executor cannot batch this model (" +
        (d.contains("not_batched_reason") ? d["not_batched_reason"].dump() : std::string("no reason given")) +
        "): only batch size 1 can be measured");

  ProfileResult r;
  const nlohmann::json key = {{"format", 2},
                              {"model_hash", subject.model_hash},
                              {"executor", subject.executor},
                              {"device", device},
                              {"threads", threads},
                              {"batch_max", B},
                              {"batches", batches},
                              {"repeats", opt.repeats}};
  const CostCache cache(opt.cache_dir);
  if (cache.enabled() && (opt.reuse_cache || opt.write_cache)) r.cache_file = cache.path_for(key);
  if (cache.enabled() && opt.reuse_cache) {
    if (auto hit = cache.load(key, &r.warnings)) {
      r.costs = std::move(*hit);
      r.cached = true;
      return r;
    }
  }

  const double t0 = now_seconds();
  const size_t n = layers.size();
  const size_t total = n * batches.size();
  // Layers whose output is a network output: the executors keep those to the
  // end even when another layer reads them, so the table must say so.
  std::set<std::string> network_outputs;
  if (d.contains("outputs") && d["outputs"].is_array())
    for (const auto& o : d["outputs"])
      if (o.is_object() && o.contains("name") && o["name"].is_string())
        network_outputs.insert(o["name"].get<std::string>());
  nlohmann::json out_layers = nlohmann::json::array();
  for (size_t i = 0; i < n; ++i) {
    const std::string name = layer_name(layers[i], i);
    const int index = static_cast<int>(i);
    nlohmann::json in_b = nlohmann::json::array(), out_b = nlohmann::json::array(),
                   ws_b = nlohmann::json::array();
    for (int b = 1; b <= B; ++b) {
      const LayerBytes lb = ex.layer_bytes(index, b);
      in_b.push_back(lb.in_bytes);
      out_b.push_back(lb.out_bytes);
      ws_b.push_back(lb.ws_bytes);
    }
    std::map<int, double> per_batch, spread;
    for (size_t k = 0; k < batches.size(); ++k) {
      const int b = batches[k];
      if (opt.progress)
        opt.progress("profiling " + subject.model_name + " on " + subject.executor + ": layer " +
                         std::to_string(i + 1) + "/" + std::to_string(n) + " '" + name + "' at batch " +
                         std::to_string(b) + "  [" + std::to_string(i * batches.size() + k + 1) + "/" +
                         std::to_string(total) + "]",
                     static_cast<double>(i * batches.size() + k) / static_cast<double>(total));
      int reps = opt.repeats;
      LayerTiming t = ex.time_layer(index, b, reps);
      // Fast layers: the median of a few microsecond runs is mostly timer noise.
      if (t.median_seconds * reps < opt.min_seconds && reps < opt.max_repeats) {
        const double each = std::max(t.median_seconds, 1e-7);
        const int more =
            static_cast<int>(std::min<double>(opt.max_repeats, std::ceil(opt.min_seconds / each)));
        if (more > reps) t = ex.time_layer(index, b, reps = more);
      }
      for (int attempt = 1;
           attempt < opt.max_attempts && t.spread_seconds > opt.max_relative_spread * t.median_seconds;
           ++attempt) {
        const LayerTiming again = ex.time_layer(index, b, reps);
        if (again.median_seconds < t.median_seconds) t = again;
      }
      per_batch[b] = t.median_seconds;
      spread[b] = t.spread_seconds;
    }
    const std::vector<double> filled = fill_batch_times(per_batch, B);
    nlohmann::json time_s = nlohmann::json::array(), spread_s = nlohmann::json::array(),
                   source = nlohmann::json::array();
    for (int b = 1; b <= B; ++b) {
      const bool measured = per_batch.count(b) > 0;
      time_s.push_back(filled[static_cast<size_t>(b - 1)] / b);
      spread_s.push_back(measured ? spread[b] / b : 0.0);
      source.push_back(measured ? "measured" : "interpolated");
    }
    out_layers.push_back({{"name", name},
                          {"inputs", layer_inputs(layers[i], name)},
                          {"time_s", time_s},
                          {"time_spread_s", spread_s},
                          {"in_bytes", in_b},
                          {"out_bytes", out_b},
                          {"ws_bytes", ws_b},
                          {"source", source}});
    const nlohmann::json& L = layers[i];
    if (L.contains("output_tensor") && L["output_tensor"].is_string() &&
        network_outputs.count(L["output_tensor"].get<std::string>()))
      out_layers.back()["network_output"] = true;
  }
  if (opt.progress) opt.progress("", 1.0);
  r.seconds = now_seconds() - t0;
  r.costs = {{"model", subject.model_name},  {"model_hash", subject.model_hash},
             {"executor", subject.executor}, {"device", device},
             {"threads", threads},           {"batch_max", B},
             {"measured_batches", batches},  {"repeats", opt.repeats},
             {"profile_seconds", r.seconds}, {"layers", out_layers}};
  if (opt.write_cache) cache.store(key, r.costs, &r.warnings);
  return r;
}

}  // namespace frugal
