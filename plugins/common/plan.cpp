#include "common/plan.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <vector>

#include "common/kernel_spec.h"
#include "frugal/error.h"

namespace frugal::exec {

Plan parse_plan(const std::string& text, const LayerGraph& m) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("plan: not valid JSON: ") + e.what());
  }
  if (!j.is_object()) throw Error("plan: expected a JSON object with \"steps\"");
  if (!j.contains("steps") || !j["steps"].is_array()) throw Error("plan: \"steps\" must be an array");
  Plan p;
  const auto& steps = j["steps"];
  for (size_t i = 0; i < steps.size(); ++i) {
    const auto& s = steps[i];
    const std::string where = "plan: step " + std::to_string(i);
    if (!s.is_object()) throw Error(where + " is not an object");
    PlanStep st;
    if (!s.contains("layer")) throw Error(where + " has no \"layer\"");
    const auto& layer = s["layer"];
    if (layer.is_string()) {
      st.layer = m.layer_index(layer.get<std::string>());
      if (st.layer < 0) throw Error(where + ": no layer named '" + layer.get<std::string>() + "'");
    } else if (layer.is_number_integer()) {
      const int64_t k = layer.get<int64_t>();
      if (k < 0 || k >= int64_t(m.layers().size()))
        throw Error(where + ": layer index " + std::to_string(k) + " is out of range (0.." +
                    std::to_string(m.layers().size() - 1) + ")");
      st.layer = int(k);
    } else {
      throw Error(where + ": \"layer\" must be a layer name or index");
    }
    for (const char* key : {"first", "count"}) {
      if (!s.contains(key) || !s[key].is_number_integer())
        throw Error(where + " (layer '" + m.layers()[size_t(st.layer)].name + "'): \"" + key +
                    "\" must be an integer");
    }
    st.first = s["first"].get<int64_t>();
    st.count = s["count"].get<int64_t>();
    if (st.first < 0 || st.count < 1)
      throw Error(where + " (layer '" + m.layers()[size_t(st.layer)].name +
                  "'): first must be >= 0 and count >= 1");
    p.steps.push_back(st);
  }
  return p;
}

Plan whole_batch_plan(const LayerGraph& m, int64_t batch) {
  Plan p;
  for (size_t l = 0; l < m.layers().size(); ++l) p.steps.push_back(PlanStep{int(l), 0, batch});
  return p;
}

namespace {

// Bytes of layer l's constant inputs (its weights and biases).
uint64_t weight_bytes(const LayerGraph& m, int l) {
  const Layer& L = m.layers()[size_t(l)];
  uint64_t bytes = 0;
  for (size_t i = 0; i < L.node_inputs.size(); ++i)
    if (L.node_inputs[i] < 0) bytes += uint64_t(product(L.constant_dims[i])) * sizeof(float);
  return bytes;
}

}  // namespace

Plan cache_blocked_plan(const LayerGraph& m, int64_t batch, uint64_t cache_bytes) {
  const int layers = int(m.layers().size());
  // The prefix [0, end) that gains the most bytes: the whole-batch traffic of its
  // layers over the limit (kept in the cache instead of memory), less the
  // weights its chunks read again ((chunks - 1) x the prefix's weights).
  int prefix = 0;  // layers [0, prefix) run in chunks
  int64_t chunk = batch, fits_min = batch;
  double best_gain = 0, kept = 0, prefix_weights = 0;
  for (int l = 0; l < layers; ++l) {
    prefix_weights += double(weight_bytes(m, l));
    const frugal_layer_bytes b = m.layer_bytes(l, 1);
    const uint64_t per_sample = std::max<uint64_t>(1, b.in_bytes + b.out_bytes);
    const int64_t fits = std::max<int64_t>(1, int64_t(cache_bytes / per_sample));
    if (fits >= batch) continue;  // within the limit: not a place to end
    fits_min = std::min(fits_min, fits);
    kept += double(batch) * double(per_sample);
    const int64_t chunks = (batch + fits_min - 1) / fits_min;  // whole chunks, the last one may be short
    const double gain = kept - double(chunks - 1) * prefix_weights;
    if (gain > best_gain) {
      best_gain = gain;
      prefix = l + 1;
      chunk = fits_min;
    }
  }
  Plan p;
  for (int64_t first = 0; prefix > 0 && first < batch; first += chunk)
    for (int l = 0; l < prefix; ++l) p.steps.push_back(PlanStep{l, first, std::min(chunk, batch - first)});
  for (int l = prefix; l < layers; ++l) p.steps.push_back(PlanStep{l, 0, batch});
  return p;
}

Plan one_sample_at_a_time_plan(const LayerGraph& m, int64_t batch) {
  Plan p;
  for (int64_t s = 0; s < batch; ++s)
    for (size_t l = 0; l < m.layers().size(); ++l) p.steps.push_back(PlanStep{int(l), s, 1});
  return p;
}

std::string describe_step(const LayerGraph& m, const PlanStep& s) {
  return "layer '" + m.layers()[size_t(s.layer)].name + "' on sample" +
         (s.count == 1 ? " " + std::to_string(s.first)
                       : "s " + std::to_string(s.first) + ".." + std::to_string(s.first + s.count - 1));
}

}  // namespace frugal::exec
