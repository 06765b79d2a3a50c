#include "executor.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <thread>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "frugal/plugin_sdk.hpp"
#include "kernels/kernel_util.h"
#include "onnx/onnx_import.h"
#include "sample_store.h"
#include "util/error.h"

namespace frugal::cpu {

namespace {

int cores_present() {
  const unsigned c = std::thread::hardware_concurrency();
  return c == 0 ? 1 : int(c);
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string join_names(const CompiledModel& m, const std::vector<int>& ids) {
  std::string s;
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? ", " : "") + m.tensors()[size_t(ids[i])].name;
  return s;
}

}  // namespace

std::string format_bytes(uint64_t bytes) {
  char buf[64];
  if (bytes >= 1000000) std::snprintf(buf, sizeof buf, "%.1f MB", double(bytes) / 1e6);
  else if (bytes >= 1000) std::snprintf(buf, sizeof buf, "%.1f kB", double(bytes) / 1e3);
  else return std::to_string(bytes) + " bytes";
  return std::string(buf) + " (" + std::to_string(bytes) + " bytes)";
}

ExecutorOptions ExecutorOptions::parse(const char* json) {
  ExecutorOptions o;
  const int cores = cores_present();
  o.threads = cores;
  if (!json || !*json) return o;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(json);
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("options: not valid JSON: ") + e.what());
  }
  if (j.is_null()) return o;
  if (!j.is_object()) throw Error("options: expected a JSON object such as {\"threads\": 2}");
  if (j.contains("threads")) {
    const auto& t = j["threads"];
    if (!t.is_number_integer()) throw Error("option 'threads' must be an integer, got " + t.dump());
    const int64_t v = t.get<int64_t>();
    if (v < 1 || v > 4 * int64_t(cores))
      throw Error("option 'threads' = " + std::to_string(v) + " is out of range: this machine has " +
                  std::to_string(cores) + " core" + (cores == 1 ? "" : "s") + ", so 1.." + std::to_string(4 * cores) +
                  " threads are allowed");
    o.threads = int(v);
  }
  return o;
}

Executor::Executor(const void* onnx, size_t size, const ExecutorOptions& options)
    : model_(load_onnx_bytes(onnx, size, "model"), options.threads), options_(options), pool_(options.threads) {}

// OpenBLAS runs single-threaded inside the executor's own threads (see thread_pool.h).
void Executor::use_threads() const { openblas_set_num_threads(1); }

std::string Executor::describe_json() const {
  using nlohmann::json;
  const CompiledModel& m = model_;
  json d;
  d["device"] = "cpu (OpenBLAS " + std::to_string(options_.threads) + " thread" + (options_.threads == 1 ? "" : "s") + ")";
  d["threads"] = options_.threads;
  d["batched"] = m.batched();
  if (!m.batched()) d["not_batched_reason"] = m.not_batched_reason();
  json layers = json::array();
  for (size_t l = 0; l < m.layers().size(); ++l) {
    const Layer& L = m.layers()[l];
    json in_layers = json::array(), in_tensors = json::array();
    for (int t : L.inputs) {
      const int p = m.tensors()[size_t(t)].producer;
      in_layers.push_back(p < 0 ? std::string() : m.layers()[size_t(p)].name);
      in_tensors.push_back(m.tensors()[size_t(t)].name);
    }
    const frugal_layer_bytes b = m.layer_bytes(int(l), 1);
    layers.push_back({{"name", L.name},
                      {"ops", L.ops},
                      {"algorithm", L.kernel->algorithm()},
                      {"nodes", L.nodes},
                      {"inputs", in_layers},
                      {"input_tensors", in_tensors},
                      {"output_tensor", m.tensors()[size_t(L.output)].name},
                      {"output_shape", m.tensors()[size_t(L.output)].dims},
                      {"macs_per_sample", L.macs_per_sample},
                      {"in_bytes_per_sample", b.in_bytes},
                      {"out_bytes_per_sample", b.out_bytes},
                      {"ws_bytes", b.ws_bytes}});
  }
  d["layers"] = layers;
  for (const char* key : {"inputs", "outputs"}) {
    json list = json::array();
    for (int t : (std::string(key) == "inputs" ? m.inputs() : m.outputs()))
      list.push_back({{"name", m.tensors()[size_t(t)].name}, {"shape", m.tensors()[size_t(t)].dims}});
    d[key] = list;
  }
  return d.dump();
}

frugal_layer_bytes Executor::layer_bytes(int layer, int batch) const {
  if (layer < 0 || size_t(layer) >= model_.layers().size())
    throw Error("layer_bytes: layer index " + std::to_string(layer) + " is out of range (the model has " +
                std::to_string(model_.layers().size()) + " layers)");
  if (batch < 1) throw Error("layer_bytes: batch must be >= 1, got " + std::to_string(batch));
  return model_.layer_bytes(layer, batch);
}

void Executor::set_budget(uint64_t bytes) {
  // More than the machine has cannot be meant (and a sanitizer build would abort on it).
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page > 0 && bytes > uint64_t(pages) * uint64_t(page))
    throw sdk::Failure(FRUGAL_ERR_OUT_OF_MEMORY, "set_budget: " + format_bytes(bytes) + " is more than this machine's memory (" +
                                                     format_bytes(uint64_t(pages) * uint64_t(page)) + ")");
  budget_set_ = false;
  arena_.reset(bytes);
  budget_set_ = true;
}

PlanMemory Executor::simulate(const Plan& plan, int64_t batch) const {
  CountingMemory mem;
  SampleStore store(model_, mem, batch);
  store.place_inputs();
  PlanMemory pm;
  pm.peak = mem.live_bytes();
  store.drop_unread_inputs();
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep& s = plan.steps[i];
    store.check_ready(i, s);
    ChunkMemory::Id ws = 0;
    bool has_ws = false;
    const ChunkMemory::Id out = store.begin_step(s, model_.layer_bytes(s.layer, s.count).ws_bytes, ws, has_ws);
    if (mem.live_bytes() > pm.peak) {
      pm.peak = mem.live_bytes();
      pm.peak_step = int64_t(i);
    }
    store.end_step(s, out, ws, has_ws);
  }
  store.check_complete();
  return pm;
}

void Executor::check_budget(const Plan& plan, int64_t batch, uint64_t budget) const {
  const PlanMemory pm = simulate(plan, batch);
  if (pm.peak <= budget) return;
  std::string msg = "needs " + format_bytes(pm.peak);
  if (pm.peak_step < 0) msg += " to hold the request's " + std::to_string(batch) + " input sample" + (batch == 1 ? "" : "s");
  else msg += " at step " + std::to_string(pm.peak_step) + " (" + describe_step(model_, plan.steps[size_t(pm.peak_step)]) + ")";
  msg += ", budget is " + format_bytes(budget);
  const PlanMemory one = simulate(one_sample_at_a_time_plan(model_, batch), batch);
  if (budget < one.peak)
    msg += "; even batch 1 does not fit: the smallest budget that works (one sample at a time through every layer" +
           std::string(batch > 1 ? ", the other samples' inputs and outputs held" : "") + ") is " + format_bytes(one.peak);
  throw sdk::Failure(FRUGAL_ERR_BUDGET, msg);
}

int64_t Executor::check_inputs(const frugal_tensor* inputs, size_t n, std::vector<const frugal_tensor*>& ordered) const {
  const CompiledModel& m = model_;
  if (n != m.inputs().size())
    throw Error("run: the model has " + std::to_string(m.inputs().size()) + " input(s) (" + join_names(m, m.inputs()) +
                "), got " + std::to_string(n));
  if (n > 0 && !inputs) throw Error("run: inputs is NULL");
  ordered.assign(n, nullptr);
  for (size_t i = 0; i < n; ++i) {
    size_t k = i;
    if (inputs[i].name) {
      auto it = std::find_if(m.inputs().begin(), m.inputs().end(),
                             [&](int t) { return m.tensors()[size_t(t)].name == inputs[i].name; });
      if (it == m.inputs().end())
        throw Error(std::string("run: no input named '") + inputs[i].name + "' (inputs: " + join_names(m, m.inputs()) + ")");
      k = size_t(it - m.inputs().begin());
    }
    if (ordered[k]) throw Error("run: input '" + m.tensors()[size_t(m.inputs()[k])].name + "' given twice");
    ordered[k] = &inputs[i];
  }
  int64_t batch = -1;
  for (size_t k = 0; k < n; ++k) {
    const frugal_tensor& t = *ordered[k];
    const ActivationTensor& a = m.tensors()[size_t(m.inputs()[k])];
    const std::string who = "run: input '" + a.name + "'";
    if (t.dtype != FRUGAL_DTYPE_FLOAT32)
      throw Error(who + " has dtype " + dtype_name(DType(t.dtype)) + ", expected float32");
    if (t.rank < 0 || (t.rank > 0 && !t.dims)) throw Error(who + " has no dims");
    const Dims dims(t.dims, t.dims + t.rank);
    const int64_t b = m.batched() && !dims.empty() ? dims[0] : 1;
    Dims expect = a.dims;
    if (m.batched()) expect[0] = b;
    if (dims != expect || b < 1) {
      std::string want = dims_string(a.dims);
      if (m.batched()) {  // "[B, 3, 224, 224]"
        std::string rest = dims_string(Dims(a.dims.begin() + 1, a.dims.end()));
        want = "[B" + (a.dims.size() > 1 ? ", " + rest.substr(1) : "]") + " with B >= 1";
      }
      throw Error(who + " has shape " + dims_string(dims) + ", expected " + want);
    }
    if (batch >= 0 && b != batch)
      throw Error(who + " has " + std::to_string(b) + " samples, the other inputs " + std::to_string(batch));
    batch = b;
    const uint64_t want = m.bytes(m.inputs()[k], b);
    if (t.bytes != want) throw Error(who + " has " + std::to_string(t.bytes) + " bytes, its shape needs " + std::to_string(want));
    if (want > 0 && !t.data) throw Error(who + " has no data");
  }
  return batch < 0 ? 1 : batch;
}

void Executor::check_outputs(frugal_tensor* outputs, size_t n, int64_t batch, std::vector<frugal_tensor*>& ordered) const {
  const CompiledModel& m = model_;
  if (n != m.outputs().size())
    throw Error("run: the model has " + std::to_string(m.outputs().size()) + " output(s) (" + join_names(m, m.outputs()) +
                "), got " + std::to_string(n));
  if (n > 0 && !outputs) throw Error("run: outputs is NULL");
  ordered.assign(n, nullptr);
  for (size_t i = 0; i < n; ++i) {
    size_t k = i;
    if (outputs[i].name) {
      auto it = std::find_if(m.outputs().begin(), m.outputs().end(),
                             [&](int t) { return m.tensors()[size_t(t)].name == outputs[i].name; });
      if (it == m.outputs().end())
        throw Error(std::string("run: no output named '") + outputs[i].name + "' (outputs: " + join_names(m, m.outputs()) + ")");
      k = size_t(it - m.outputs().begin());
    }
    if (ordered[k]) throw Error("run: output '" + m.tensors()[size_t(m.outputs()[k])].name + "' given twice");
    ordered[k] = &outputs[i];
  }
  for (size_t k = 0; k < n; ++k) {
    const frugal_tensor& t = *ordered[k];
    const int id = m.outputs()[k];
    const std::string who = "run: output '" + m.tensors()[size_t(id)].name + "'";
    if (t.dtype != FRUGAL_DTYPE_FLOAT32) throw Error(who + " has dtype " + dtype_name(DType(t.dtype)) + ", expected float32");
    const Dims want = m.dims_at(id, batch);
    const Dims dims = t.rank > 0 && t.dims ? Dims(t.dims, t.dims + t.rank) : Dims{};
    if (dims != want) throw Error(who + " has shape " + dims_string(dims) + ", expected " + dims_string(want));
    if (t.bytes != m.bytes(id, batch))
      throw Error(who + " has " + std::to_string(t.bytes) + " bytes, its shape needs " + std::to_string(m.bytes(id, batch)));
    if (t.bytes > 0 && !t.data) throw Error(who + " has no data");
  }
}

void Executor::run_step(const PlanStep& s, const SampleStore& store, float* out, float* ws) const {
  const CompiledModel& m = model_;
  const Layer& L = m.layers()[size_t(s.layer)];
  const int64_t a = s.first, b = s.first + s.count;
  // Cut the samples where any input changes chunk: each part has contiguous inputs.
  std::vector<int64_t> cuts = {a, b};
  for (int t : L.inputs)
    for (const SampleStore::Piece& p : store.pieces(t)) {
      if (p.first > a && p.first < b) cuts.push_back(p.first);
      if (p.first + p.count > a && p.first + p.count < b) cuts.push_back(p.first + p.count);
    }
  std::sort(cuts.begin(), cuts.end());
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  const Arena& arena = arena_;
  for (size_t c = 0; c + 1 < cuts.size(); ++c) {
    const int64_t lo = cuts[c], n = cuts[c + 1] - lo;
    KernelArgs args;
    args.pool = &pool_;
    args.in_dims = m.call_dims(s.layer, n);
    for (int t : L.node_inputs) {
      if (t < 0) {
        args.in.push_back(nullptr);
        continue;
      }
      const SampleStore::Piece& p = store.piece_of(t, lo);
      args.in.push_back(arena.data(p.chunk) + (lo - p.first) * m.tensors()[size_t(t)].sample_elems);
    }
    args.out = out + (lo - a) * m.tensors()[size_t(L.output)].sample_elems;
    args.out_dims = m.dims_at(L.output, n);
    args.ws = ws;
    if (product(args.out_dims) == 0) continue;  // an empty output: nothing to compute
    L.kernel->run(args);
  }
}

std::string Executor::run(const char* plan_json, const frugal_tensor* inputs, size_t n_inputs, frugal_tensor* outputs,
                          size_t n_outputs) {
  const CompiledModel& m = model_;
  std::vector<const frugal_tensor*> ins;
  std::vector<frugal_tensor*> outs;
  const int64_t batch = check_inputs(inputs, n_inputs, ins);
  check_outputs(outputs, n_outputs, batch, outs);
  const Plan plan = plan_json ? parse_plan(plan_json, m) : whole_batch_plan(m, batch);
  const PlanMemory predicted = simulate(plan, batch);  // validates the plan
  const bool auto_budget = !budget_set_;
  if (auto_budget) arena_.reset(predicted.peak);  // no budget given: exactly what this plan needs
  else check_budget(plan, batch, arena_.capacity());

  use_threads();
  const double t0 = now_seconds();
  arena_.clear();
  SampleStore store(m, arena_, batch);
  const std::vector<ChunkMemory::Id> in_chunks = store.place_inputs();
  for (size_t k = 0; k < ins.size(); ++k)
    if (ins[k]->bytes) std::memcpy(arena_.data(in_chunks[k]), ins[k]->data, ins[k]->bytes);
  store.drop_unread_inputs();
  nlohmann::json steps = nlohmann::json::array();
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep& s = plan.steps[i];
    const double ts = now_seconds();
    ChunkMemory::Id ws = 0;
    bool has_ws = false;
    const ChunkMemory::Id out = store.begin_step(s, m.layer_bytes(s.layer, s.count).ws_bytes, ws, has_ws);
    // Addresses only now: the allocations above may have compacted the arena.
    run_step(s, store, arena_.data(out), has_ws ? arena_.data(ws) : nullptr);
    store.end_step(s, out, ws, has_ws);
    steps.push_back({{"layer", m.layers()[size_t(s.layer)].name},
                     {"first", s.first},
                     {"count", s.count},
                     {"seconds", now_seconds() - ts}});
  }
  for (size_t k = 0; k < outs.size(); ++k) {
    const int t = m.outputs()[k];
    const uint64_t sb = m.sample_bytes(t);
    for (const SampleStore::Piece& p : store.pieces(t))
      if (sb) std::memcpy(static_cast<char*>(outs[k]->data) + uint64_t(p.first) * sb, arena_.data(p.chunk), uint64_t(p.count) * sb);
  }
  const double seconds = now_seconds() - t0;
  const uint64_t peak = arena_.peak_bytes();
  nlohmann::json report = {{"peak_bytes", peak},
                           {"predicted_peak_bytes", predicted.peak},
                           {"budget_bytes", arena_.capacity()},
                           {"auto_budget", auto_budget},
                           {"batch", batch},
                           {"seconds", seconds},
                           {"compactions", arena_.compactions()},
                           {"moved_bytes", arena_.moved_bytes()},
                           {"steps", steps}};
  store.release_all();
  arena_.clear();
  if (auto_budget) arena_.reset(0);
  return report.dump();
}

void Executor::time_layer(int layer, int batch, int repeats, double& median, double& spread) {
  const CompiledModel& m = model_;
  if (layer < 0 || size_t(layer) >= m.layers().size())
    throw Error("time_layer: layer index " + std::to_string(layer) + " is out of range (the model has " +
                std::to_string(m.layers().size()) + " layers)");
  if (batch < 1) throw Error("time_layer: batch must be >= 1, got " + std::to_string(batch));
  if (!m.batched() && batch != 1)
    throw Error("time_layer: the model is not batched (" + m.not_batched_reason() + "), only batch 1 can be timed");
  if (repeats < 1) throw Error("time_layer: repeats must be >= 1, got " + std::to_string(repeats));
  const Layer& L = m.layers()[size_t(layer)];
  const frugal_layer_bytes need = m.layer_bytes(layer, batch);
  const uint64_t total = need.in_bytes + need.out_bytes + need.ws_bytes;
  Arena local;
  Arena* arena = &arena_;
  if (!budget_set_) {
    local.reset(total);
    arena = &local;
  } else if (total > arena_.capacity()) {
    throw sdk::Failure(FRUGAL_ERR_BUDGET, "time_layer: layer '" + L.name + "' at batch " + std::to_string(batch) +
                                              " needs " + format_bytes(total) + ", budget is " + format_bytes(arena_.capacity()));
  }
  arena->clear();
  // Synthetic inputs: a fixed pseudo-random pattern in [-1, 1).
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
  use_threads();
  L.kernel->run(args);  // warm-up
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    const double t0 = now_seconds();
    L.kernel->run(args);
    times.push_back(now_seconds() - t0);
  }
  std::sort(times.begin(), times.end());
  const size_t h = times.size() / 2;
  median = times.size() % 2 ? times[h] : 0.5 * (times[h - 1] + times[h]);
  spread = times.back() - times.front();
  arena->clear();
}

}  // namespace frugal::cpu
