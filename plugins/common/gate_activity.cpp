#include "common/gate_activity.h"

#include <algorithm>
#include <cmath>

#include "frugal/error.h"

namespace frugal::exec {

namespace {

double checked(const nlohmann::json& v, const std::string& what) {
  if (!v.is_number() || !(v.get<double>() >= 0.0 && v.get<double>() <= 1.0))
    throw Error("option 'gate_activity'" + what + " must be a number in [0, 1], got " + v.dump());
  return v.get<double>();
}

}  // namespace

GateActivity GateActivity::parse(const nlohmann::json& v) {
  GateActivity a;
  if (v.is_null()) return a;
  a.given = v;
  if (v.is_object()) {
    for (auto it = v.begin(); it != v.end(); ++it)
      a.per_layer[it.key()] = checked(it.value(), " for layer '" + it.key() + "'");
    return a;
  }
  if (!v.is_number())
    throw Error("option 'gate_activity' must be a number in [0, 1] or an object {layer: number}, got " +
                v.dump());
  a.all = checked(v, "");
  return a;
}

std::optional<double> GateActivity::of(const std::string& layer) const {
  if (all) return all;
  auto it = per_layer.find(layer);
  if (it == per_layer.end()) return std::nullopt;
  return it->second;
}

bool on_at_activity(int64_t k, double a) { return std::floor(double(k + 1) * a) > std::floor(double(k) * a); }

void zero_off_channels(float* data, int64_t samples, int64_t channels, int64_t plane, double a) {
  for (int64_t s = 0; s < samples; ++s)
    for (int64_t c = 0; c < channels; ++c)
      if (!on_at_activity(c, a)) std::fill_n(data + (s * channels + c) * plane, plane, 0.0f);
}

}  // namespace frugal::exec
