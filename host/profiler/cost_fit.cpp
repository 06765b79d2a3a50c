#include "profiler/cost_fit.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "frugal/error.h"
#include "profiler/cost_numbers.h"

namespace frugal {

BatchTimeModel fit_batch_time(const std::map<int, double>& measured) {
  if (measured.empty()) throw Error("fit_batch_time: no measured batch size");
  for (const auto& [b, t] : measured)
    if (b < 1 || !std::isfinite(t) || t <= 0)
      throw Error("fit_batch_time: bad measurement at batch " + std::to_string(b) + ": " + std::to_string(t) +
                  " s");
  // Weighted normal equations of T(b) = a + c * b with weights 1 / T_b^2.
  double s1 = 0, sb = 0, sbb = 0, st = 0, sbt = 0;
  for (const auto& [b, t] : measured) {
    const double w = 1.0 / (t * t), x = b;
    s1 += w, sb += w * x, sbb += w * x * x, st += w * t, sbt += w * x * t;
  }
  BatchTimeModel m;
  const double det = s1 * sbb - sb * sb;
  if (measured.size() > 1 && det > 0) {
    m.fixed_s = (sbb * st - sb * sbt) / det;
    m.per_sample_s = (s1 * sbt - sb * st) / det;
  }
  // One size, or a fit outside the constraints: the best fit with the offending
  // parameter at 0 (the constrained optimum lies on that boundary).
  if (measured.size() == 1 || det <= 0 || m.fixed_s < 0) {
    m.fixed_s = 0;
    m.per_sample_s = sbt / sbb;
  } else if (m.per_sample_s < 0) {
    m.per_sample_s = 0;
    m.fixed_s = st / s1;
  }
  return m;
}

namespace {

std::string joined(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

}  // namespace

nlohmann::json fit_cost_times(const nlohmann::json& costs, const std::vector<std::string>& sources) {
  if (!costs.is_object() || !costs.contains("layers") || !costs["layers"].is_array())
    throw Error("fit: the cost table has no \"layers\" list");
  check_cost_numbers(costs, "fit");  // a null is a failed measurement, not one to skip
  nlohmann::json out = costs;
  for (size_t i = 0; i < out["layers"].size(); ++i) {
    nlohmann::json& L = out["layers"][i];
    const std::string where = "fit: layer " + std::to_string(i) + " '" + L.value("name", std::string()) + "'";
    if (!L.contains("time_s") || !L["time_s"].is_array()) throw Error(where + " has no time_s list");
    const nlohmann::json& t = L["time_s"];
    const bool has_source = L.contains("source") && L["source"].is_array() && L["source"].size() == t.size();
    std::map<int, double> measured;
    for (size_t k = 0; k < t.size(); ++k) {
      if (has_source &&
          (!L["source"][k].is_string() ||
           std::find(sources.begin(), sources.end(), L["source"][k].get<std::string>()) == sources.end()))
        continue;
      if (!t[k].is_number() || !(t[k].get<double>() > 0)) continue;  // a zero time says nothing of the trend
      const int b = static_cast<int>(k) + 1;
      measured[b] = t[k].get<double>() * b;
    }
    if (measured.empty()) throw Error(where + " has no " + joined(sources, " or ") + " time above 0 to fit");
    const BatchTimeModel m = fit_batch_time(measured);
    nlohmann::json fitted = nlohmann::json::array(), source = nlohmann::json::array();
    for (size_t k = 0; k < t.size(); ++k) {
      const double b = static_cast<double>(k + 1);
      fitted.push_back((m.fixed_s + m.per_sample_s * b) / b);
      source.push_back("fitted");
    }
    L["measured_time_s"] = t;
    L["time_s"] = fitted;
    L["source"] = source;
    L["time_model"] = {{"fixed_s", m.fixed_s}, {"per_sample_s", m.per_sample_s}};
  }
  out["time_fit"] = "per layer T(b) = fixed_s + per_sample_s * b, least squares on relative errors";
  return out;
}

}  // namespace frugal
