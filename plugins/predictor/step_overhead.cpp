#include "step_overhead.h"

#include <algorithm>
#include <map>
#include <string>

namespace frugal::predictor {

namespace {

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : 0.5 * (v[h - 1] + v[h]);
}

}  // namespace

nlohmann::json fit_step_overheads(const std::vector<std::vector<LayerFacts>>& facts,
                                  const std::vector<const nlohmann::json*>& tables) {
  std::map<std::string, std::vector<double>> by_family;
  std::vector<double> all;
  for (size_t t = 0; t < tables.size(); ++t) {
    const nlohmann::json& layers = tables[t]->at("layers");
    for (size_t l = 0; l < facts[t].size() && l < layers.size(); ++l) {
      const nlohmann::json& s = layers[l].value("step_overhead_s", nlohmann::json());
      if (!s.is_number() || s.get<double>() < 0) continue;
      by_family[facts[t][l].family].push_back(s.get<double>());
      all.push_back(s.get<double>());
    }
  }
  nlohmann::json out = {
      {"by_family", nlohmann::json::object()}, {"default", median(all)}, {"layers", all.size()}};
  for (const auto& [family, v] : by_family) out["by_family"][family] = median(v);
  return out;
}

void fill_step_overheads(const nlohmann::json& fitted, const std::vector<LayerFacts>& facts,
                         nlohmann::json& costs) {
  const double fallback = fitted.at("default").get<double>();
  costs["step_overhead_s"] = fallback;
  nlohmann::json& layers = costs.at("layers");
  for (size_t l = 0; l < facts.size() && l < layers.size(); ++l) {
    if (layers[l].contains("step_overhead_s")) continue;
    const nlohmann::json& fam = fitted.at("by_family");
    layers[l]["step_overhead_s"] =
        fam.contains(facts[l].family) ? fam[facts[l].family].get<double>() : fallback;
  }
}

}  // namespace frugal::predictor
