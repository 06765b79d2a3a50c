#include "profiler/cost_numbers.h"

#include <cmath>

#include "frugal/error.h"

namespace frugal {

namespace {

// The per-batch arrays of a layer (docs/COSTS.md; measured_time_s after a fit).
constexpr const char* kPerBatchFields[] = {"time_s",   "time_spread_s", "measured_time_s",
                                           "in_bytes", "out_bytes",     "ws_bytes"};

// Why v is not a finite number >= 0, or "" when it is one.
std::string not_a_cost(const nlohmann::json& v) {
  if (v.is_null()) return "null, not a number (a measurement that failed?)";
  if (!v.is_number()) return "not a number (" + v.dump() + ")";
  const double x = v.get<double>();
  if (std::isnan(x)) return "NaN";
  if (!std::isfinite(x)) return "infinite";
  if (x < 0) return "negative (" + v.dump() + ")";
  return "";
}

void check_field(const nlohmann::json& layer, const char* field, const std::string& where) {
  if (!layer.contains(field)) return;  // required fields are the planner's to demand
  const nlohmann::json& a = layer[field];
  if (!a.is_array()) throw Error(where + " \"" + field + "\" is not a list (one entry per batch size)");
  for (size_t k = 0; k < a.size(); ++k) {
    const std::string why = not_a_cost(a[k]);
    if (!why.empty())
      throw Error(where + " " + field + "[" + std::to_string(k) + "] (batch " + std::to_string(k + 1) +
                  ") is " + why);
  }
}

}  // namespace

void check_cost_numbers(const nlohmann::json& costs, const std::string& origin) {
  if (!costs.is_object() || !costs.contains("layers") || !costs["layers"].is_array())
    throw Error(origin + ": not a cost table (no \"layers\" list)");
  const nlohmann::json& layers = costs["layers"];
  for (size_t i = 0; i < layers.size(); ++i) {
    const nlohmann::json& l = layers[i];
    if (!l.is_object()) throw Error(origin + ": layer " + std::to_string(i) + " is not a JSON object");
    const std::string name = l.contains("name") && l["name"].is_string() ? l["name"].get<std::string>() : "";
    const std::string where = origin + ": layer " + std::to_string(i) + " '" + name + "'";
    for (const char* field : kPerBatchFields) check_field(l, field, where);
  }
}

}  // namespace frugal
