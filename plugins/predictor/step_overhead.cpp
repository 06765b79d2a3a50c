#include "step_overhead.h"

#include <map>
#include <string>

namespace frugal::predictor {

namespace {

// The mean, not the median: a network's latency sums the overheads, and most
// layers have almost none where a few have much (on the basis the median per
// family was up to 4 times below the mean; unseen networks' summed overheads
// came out up to 9 times too low from medians).
double mean(const std::vector<double>& v) {
  double sum = 0;
  for (double x : v) sum += x;
  return v.empty() ? 0 : sum / double(v.size());
}

// Input and output bytes of one sample at the layer's largest batch.
double bytes_per_sample(const LayerFacts& f) {
  if (f.in_bytes.empty() || f.out_bytes.empty()) return 0;
  return (f.in_bytes.back() + f.out_bytes.back()) / double(f.in_bytes.size());
}

// A number >= 0 under `key` of a layer, else nullptr.
const nlohmann::json* overhead(const nlohmann::json& layer, const char* key) {
  const auto it = layer.find(key);
  return it != layer.end() && it->is_number() && it->get<double>() >= 0 ? &*it : nullptr;
}

// Seconds per byte: the summed overheads over the summed bytes (0 without bytes).
struct Rate {
  double seconds = 0, bytes = 0;
  double value() const { return bytes > 0 ? seconds / bytes : 0; }
};

nlohmann::json fit_per_sample(const std::vector<std::vector<LayerFacts>>& facts,
                              const std::vector<const nlohmann::json*>& tables) {
  std::map<std::string, Rate> by_family;
  Rate all;
  size_t layers = 0;
  for (size_t t = 0; t < tables.size(); ++t) {
    const nlohmann::json& rows = tables[t]->at("layers");
    for (size_t l = 0; l < facts[t].size() && l < rows.size(); ++l) {
      const nlohmann::json* s = overhead(rows[l], "step_overhead_per_sample_s");
      if (!s) continue;
      for (Rate* r : {&by_family[facts[t][l].family], &all})
        r->seconds += s->get<double>(), r->bytes += bytes_per_sample(facts[t][l]);
      ++layers;
    }
  }
  nlohmann::json out = {
      {"by_family", nlohmann::json::object()}, {"default", all.value()}, {"layers", layers}};
  for (const auto& [family, r] : by_family) out["by_family"][family] = r.value();
  return out;
}

}  // namespace

nlohmann::json fit_step_overheads(const std::vector<std::vector<LayerFacts>>& facts,
                                  const std::vector<const nlohmann::json*>& tables) {
  std::map<std::string, std::vector<double>> by_family;
  std::vector<double> all;
  for (size_t t = 0; t < tables.size(); ++t) {
    const nlohmann::json& layers = tables[t]->at("layers");
    for (size_t l = 0; l < facts[t].size() && l < layers.size(); ++l) {
      const nlohmann::json* s = overhead(layers[l], "step_overhead_s");
      if (!s) continue;
      by_family[facts[t][l].family].push_back(s->get<double>());
      all.push_back(s->get<double>());
    }
  }
  nlohmann::json out = {{"by_family", nlohmann::json::object()},
                        {"default", mean(all)},
                        {"layers", all.size()},
                        {"per_sample", fit_per_sample(facts, tables)}};
  for (const auto& [family, v] : by_family) out["by_family"][family] = mean(v);
  return out;
}

void fill_step_overheads(const nlohmann::json& fitted, const std::vector<LayerFacts>& facts,
                         nlohmann::json& costs) {
  const double fallback = fitted.at("default").get<double>();
  const nlohmann::json& per_sample = fitted.at("per_sample");
  const double fallback_rate = per_sample.at("default").get<double>();
  costs["step_overhead_s"] = fallback;
  nlohmann::json& layers = costs.at("layers");
  for (size_t l = 0; l < facts.size() && l < layers.size(); ++l) {
    const std::string& family = facts[l].family;
    if (!layers[l].contains("step_overhead_s")) {
      const nlohmann::json& fam = fitted.at("by_family");
      layers[l]["step_overhead_s"] = fam.contains(family) ? fam[family].get<double>() : fallback;
    }
    if (!layers[l].contains("step_overhead_per_sample_s")) {
      const nlohmann::json& fam = per_sample.at("by_family");
      const double rate = fam.contains(family) ? fam[family].get<double>() : fallback_rate;
      layers[l]["step_overhead_per_sample_s"] = rate * bytes_per_sample(facts[l]);
    }
  }
}

}  // namespace frugal::predictor
