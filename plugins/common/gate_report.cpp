#include "common/gate_report.h"

namespace frugal::exec {

nlohmann::json gate_report(const LayerGraph& m, const std::vector<GateStats>& stats) {
  nlohmann::json out = nlohmann::json::array();
  for (size_t l = 0; l < m.layers().size() && l < stats.size(); ++l) {
    const Layer& L = m.layers()[l];
    if (L.gate_kernels == 0 && !L.skips_off_channels) continue;
    const GateStats& s = stats[l];
    nlohmann::json e = {
        {"layer", L.name},      {"gated", L.gate_kernels > 0}, {"skips_off_channels", L.skips_off_channels},
        {"samples", s.samples}, {"effective_macs", s.macs},    {"dense_macs", L.macs_per_sample * s.samples}};
    if (L.gate_kernels > 0) {
      e["kernels"] = s.kernels;
      e["kernels_on"] = s.kernels_on;
      e["activity"] = s.kernels > 0 ? double(s.kernels_on) / double(s.kernels) : 0.0;
      e["threshold"] = L.gate_threshold;
    }
    out.push_back(e);
  }
  return out;
}

}  // namespace frugal::exec
