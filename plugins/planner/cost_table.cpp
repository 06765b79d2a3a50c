#include "cost_table.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "frugal/error.h"

namespace frugal::planner {

using nlohmann::json;

namespace {

constexpr int kMaxBatch = 1024;  // the DPs are quadratic in the batch

[[noreturn]] void fail(const std::string& origin, const std::string& what) {
  throw Error(origin + ": " + what);
}

std::string layer_ref(const std::string& name, size_t index) {
  return "layer " + std::to_string(index) + " '" + name + "'";
}

const json& require(const json& obj, const char* key, const std::string& origin, const std::string& where) {
  auto it = obj.find(key);
  if (it == obj.end()) fail(origin, where + " has no \"" + key + "\"");
  return *it;
}

// A non-negative integer byte count; JSON floats are accepted when integral.
uint64_t as_bytes(const json& v, const std::string& origin, const std::string& where) {
  if (v.is_number_unsigned()) return v.get<uint64_t>();
  if (v.is_number_integer()) {
    int64_t x = v.get<int64_t>();
    if (x < 0) fail(origin, where + " is negative (" + std::to_string(x) + ")");
    return static_cast<uint64_t>(x);
  }
  if (v.is_number_float()) {
    double x = v.get<double>();
    if (std::isnan(x)) fail(origin, where + " is NaN");
    if (x < 0) fail(origin, where + " is negative (" + v.dump() + ")");
    if (x != std::floor(x) || x > 9.0e18)
      fail(origin, where + " is not a whole number of bytes (" + v.dump() + ")");
    return static_cast<uint64_t>(x);
  }
  if (v.is_null()) fail(origin, where + " is null, not a number");
  fail(origin, where + " is not a number (" + v.dump() + ")");
}

double as_seconds(const json& v, const std::string& origin, const std::string& where) {
  if (v.is_null()) fail(origin, where + " is null, not a number (a measurement that failed?)");
  if (!v.is_number()) fail(origin, where + " is not a number (" + v.dump() + ")");
  double x = v.get<double>();
  if (std::isnan(x)) fail(origin, where + " is NaN");
  if (!std::isfinite(x)) fail(origin, where + " is infinite");
  if (x < 0) fail(origin, where + " is negative (" + v.dump() + ")");
  return x;
}

const json& batch_array(const json& layer, const char* key, int B, const std::string& origin,
                        const std::string& where) {
  const json& a = require(layer, key, origin, where);
  if (!a.is_array()) fail(origin, where + " \"" + std::string(key) + "\" is not an array");
  if (static_cast<int>(a.size()) != B)
    fail(origin, where + " \"" + std::string(key) + "\" has " + std::to_string(a.size()) +
                     " entries, batch_max is " + std::to_string(B) + " (one entry per batch size 1.." +
                     std::to_string(B) + ")");
  return a;
}

std::string entry(const std::string& where, const char* key, int i) {
  return where + " " + key + "[" + std::to_string(i) + "] (batch " + std::to_string(i + 1) + ")";
}

void check_proportional(const std::vector<uint64_t>& v, const char* key, const std::string& origin,
                        const std::string& where) {
  for (size_t i = 1; i < v.size(); ++i)
    if (v[i] != v[0] * (i + 1))
      fail(origin, entry(where, key, static_cast<int>(i)) + " = " + std::to_string(v[i]) + " is not " +
                       std::to_string(i + 1) + " x " + key + "[0] = " + std::to_string(v[0] * (i + 1)) +
                       "; activation bytes must be proportional to the batch (docs/COSTS.md)");
}

}  // namespace

std::vector<int> CostTable::distinct_inputs(int layer) const {
  std::vector<int> v = layers[layer].inputs;
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}

int CostTable::find(const std::string& name) const {
  for (int i = 0; i < size(); ++i)
    if (layers[i].name == name) return i;
  return -1;
}

namespace {

// "model", "executor" and "batch_max".
void parse_header(const json& j, const std::string& origin, CostTable& t) {
  if (!j.is_object()) fail(origin, "is not a JSON object");
  if (j.contains("model")) {
    if (!j["model"].is_string()) fail(origin, "\"model\" is not a string");
    t.model = j["model"].get<std::string>();
  }
  if (j.contains("executor")) {
    if (!j["executor"].is_string()) fail(origin, "\"executor\" is not a string");
    t.executor = j["executor"].get<std::string>();
  }
  const json& bm = require(j, "batch_max", origin, "the table");
  if (!bm.is_number_integer() || bm.get<int64_t>() < 1)
    fail(origin, "\"batch_max\" must be a positive integer (got " + bm.dump() + ")");
  if (bm.get<int64_t>() > kMaxBatch)
    fail(origin, "\"batch_max\" " + bm.dump() + " is above the supported " + std::to_string(kMaxBatch));
  t.batch_max = static_cast<int>(bm.get<int64_t>());
  if (j.contains("step_overhead_s"))
    t.step_overhead_s = as_seconds(j["step_overhead_s"], origin, "the table's \"step_overhead_s\"");
  if (j.contains("run_overhead_s"))
    t.run_overhead_s = as_seconds(j["run_overhead_s"], origin, "the table's \"run_overhead_s\"");
  if (j.contains("run_overhead_per_sample_s"))
    t.run_overhead_per_sample_s =
        as_seconds(j["run_overhead_per_sample_s"], origin, "the table's \"run_overhead_per_sample_s\"");
}

// Layer name -> index, read before the layers themselves so that a reference
// to a later layer can be told from an unknown one.
std::map<std::string, size_t> index_layer_names(const json& layers, const std::string& origin) {
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < layers.size(); ++i) {
    const json& l = layers[i];
    if (!l.is_object()) fail(origin, "layer " + std::to_string(i) + " is not a JSON object");
    const json& nm = require(l, "name", origin, "layer " + std::to_string(i));
    if (!nm.is_string() || nm.get<std::string>().empty())
      fail(origin, "layer " + std::to_string(i) + " has no usable \"name\" (got " + nm.dump() + ")");
    std::string name = nm.get<std::string>();
    auto [it, fresh] = index.emplace(name, i);
    if (!fresh)
      fail(origin, "layer name '" + name + "' is used twice (layers " + std::to_string(it->second) + " and " +
                       std::to_string(i) + ")");
  }
  return index;
}

// "inputs": names of earlier layers, "" (or an empty list) for the network input.
std::vector<int> parse_inputs(const json& l, size_t i, const std::map<std::string, size_t>& index,
                              const std::string& origin, const std::string& where) {
  const json& ins = require(l, "inputs", origin, where);
  if (!ins.is_array()) fail(origin, where + " \"inputs\" is not an array");
  std::vector<int> inputs;
  if (ins.empty()) inputs.push_back(kNetworkInput);  // [] reads the network input
  for (const json& in : ins) {
    if (!in.is_string()) fail(origin, where + " has a non-string input " + in.dump());
    std::string src = in.get<std::string>();
    if (src.empty()) {
      inputs.push_back(kNetworkInput);
      continue;
    }
    auto it = index.find(src);
    if (it == index.end()) fail(origin, where + " reads '" + src + "', which is not a layer of the table");
    if (it->second == i) fail(origin, where + " reads its own output (a cycle)");
    if (it->second > i)
      fail(origin, where + " reads '" + src + "' (layer " + std::to_string(it->second) +
                       "), which comes after it: layers must be listed in execution order, and the "
                       "graph must have no cycle");
    inputs.push_back(static_cast<int>(it->second));
  }
  return inputs;
}

// time_s, in_bytes, out_bytes and ws_bytes: one entry per batch size 1..B.
void parse_batch_arrays(const json& l, int B, const std::string& origin, const std::string& where,
                        LayerCost& lc) {
  const json& time = batch_array(l, "time_s", B, origin, where);
  const json& in_b = batch_array(l, "in_bytes", B, origin, where);
  const json& out_b = batch_array(l, "out_bytes", B, origin, where);
  const json& ws_b = batch_array(l, "ws_bytes", B, origin, where);
  for (int b = 0; b < B; ++b) {
    lc.time_s.push_back(as_seconds(time[b], origin, entry(where, "time_s", b)));
    lc.in_bytes.push_back(as_bytes(in_b[b], origin, entry(where, "in_bytes", b)));
    lc.out_bytes.push_back(as_bytes(out_b[b], origin, entry(where, "out_bytes", b)));
    lc.ws_bytes.push_back(as_bytes(ws_b[b], origin, entry(where, "ws_bytes", b)));
  }
  check_proportional(lc.out_bytes, "out_bytes", origin, where);
  check_proportional(lc.in_bytes, "in_bytes", origin, where);
}

// The optional "source" (per batch), "network_output", "step_overhead_s" and
// "step_overhead_per_sample_s".
void parse_layer_notes(const json& l, int B, double table_step_overhead, const std::string& origin,
                       const std::string& where, LayerCost& lc) {
  lc.step_overhead_s = table_step_overhead;
  if (l.contains("step_overhead_s"))
    lc.step_overhead_s = as_seconds(l["step_overhead_s"], origin, where + " step_overhead_s");
  if (l.contains("step_overhead_per_sample_s"))
    lc.step_overhead_per_sample_s =
        as_seconds(l["step_overhead_per_sample_s"], origin, where + " step_overhead_per_sample_s");
  if (l.contains("source")) {
    const json& src = batch_array(l, "source", B, origin, where);
    for (int b = 0; b < B; ++b) {
      // "interpolated": the profiler's stand-in for a predictor (host/profiler/batch_fill.h);
      // "fitted": smoothed by a per-layer time model (host/profiler/cost_fit.h).
      if (!src[b].is_string() ||
          (src[b] != "measured" && src[b] != "predicted" && src[b] != "interpolated" && src[b] != "fitted"))
        fail(origin, entry(where, "source", b) +
                         " must be \"measured\", \"predicted\", \"interpolated\" or \"fitted\" (got " +
                         src[b].dump() + ")");
      lc.source.push_back(src[b].get<std::string>());
    }
  }
  if (l.contains("network_output")) {
    if (!l["network_output"].is_boolean()) fail(origin, where + " \"network_output\" must be true or false");
    lc.network_output = l["network_output"].get<bool>();
  }
}

// in_bytes is the sum over the listed inputs: it fixes the network input's size
// and must agree with the producers' out_bytes everywhere else.
void derive_input_bytes(const std::string& origin, CostTable& t) {
  bool input_known = false;
  for (int i = 0; i < t.size(); ++i) {
    const LayerCost& l = t.layers[i];
    uint64_t from_layers = 0;
    int net = 0;
    for (int src : l.inputs) {
      if (src == kNetworkInput)
        ++net;
      else
        from_layers += t.out_per_sample(src);
    }
    const std::string where = layer_ref(l.name, i);
    if (net == 0) {
      if (l.in_bytes[0] != from_layers)
        fail(origin, where + " in_bytes[0] = " + std::to_string(l.in_bytes[0]) +
                         " is not the sum of its inputs' out_bytes[0] = " + std::to_string(from_layers));
      continue;
    }
    if (l.in_bytes[0] < from_layers || (l.in_bytes[0] - from_layers) % net != 0)
      fail(origin, where + " in_bytes[0] = " + std::to_string(l.in_bytes[0]) +
                       " does not fit its inputs (layer inputs give " + std::to_string(from_layers) +
                       " bytes)");
    const uint64_t per_sample = (l.in_bytes[0] - from_layers) / net;
    if (input_known && per_sample != t.input_bytes_per_sample)
      fail(origin, where + " implies a network input of " + std::to_string(per_sample) +
                       " bytes per sample, an earlier layer implies " +
                       std::to_string(t.input_bytes_per_sample));
    t.input_bytes_per_sample = per_sample;
    input_known = true;
  }
}

void derive_consumers(CostTable& t) {
  t.consumers.assign(t.size(), {});
  for (int i = 0; i < t.size(); ++i)
    for (int src : t.distinct_inputs(i))
      (src == kNetworkInput ? t.input_consumers : t.consumers[src]).push_back(i);
}

}  // namespace

CostTable parse_cost_table(const json& j, const std::string& origin) {
  CostTable t;
  parse_header(j, origin, t);
  const json& layers = require(j, "layers", origin, "the table");
  if (!layers.is_array()) fail(origin, "\"layers\" is not an array");
  if (layers.empty()) fail(origin, "\"layers\" is empty: no layers to plan");
  const std::map<std::string, size_t> index = index_layer_names(layers, origin);
  for (size_t i = 0; i < layers.size(); ++i) {
    const json& l = layers[i];
    LayerCost lc;
    lc.name = l["name"].get<std::string>();
    const std::string where = layer_ref(lc.name, i);
    lc.inputs = parse_inputs(l, i, index, origin, where);
    parse_batch_arrays(l, t.batch_max, origin, where, lc);
    parse_layer_notes(l, t.batch_max, t.step_overhead_s, origin, where, lc);
    t.layers.push_back(std::move(lc));
  }
  derive_input_bytes(origin, t);
  derive_consumers(t);
  return t;
}

CostTable parse_cost_table_text(const std::string& text, const std::string& origin) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {  // parse_error, or out_of_range for a number like 1e400
    throw Error(origin + ": not valid JSON: " + e.what());
  }
  return parse_cost_table(j, origin);
}

json cost_table_to_json(const CostTable& t) {
  json layers = json::array();
  for (const LayerCost& l : t.layers) {
    json ins = json::array();
    for (int s : l.inputs) ins.push_back(s == kNetworkInput ? std::string() : t.layers[s].name);
    json jl = {{"name", l.name},           {"inputs", ins},
               {"time_s", l.time_s},       {"in_bytes", l.in_bytes},
               {"out_bytes", l.out_bytes}, {"ws_bytes", l.ws_bytes}};
    if (!l.source.empty()) jl["source"] = l.source;
    if (l.network_output) jl["network_output"] = true;
    if (l.step_overhead_s != 0) jl["step_overhead_s"] = l.step_overhead_s;
    if (l.step_overhead_per_sample_s != 0) jl["step_overhead_per_sample_s"] = l.step_overhead_per_sample_s;
    layers.push_back(std::move(jl));
  }
  return {{"model", t.model}, {"executor", t.executor}, {"batch_max", t.batch_max}, {"layers", layers}};
}

}  // namespace frugal::planner
