// A stated activity for timing gated layers (docs/GATING.md, "Profiling gated
// layers"): the executor option {"gate_activity": A} or {"gate_activity":
// {"layer": A, ...}} makes time_layer run a gated conv with floor(A x K) of its
// K kernels on (spread evenly, whatever its gate computes) and give a gate's
// consumer a synthetic input whose channels are all zero but floor(A x C).
// Runs are not affected: there the gates decide.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace frugal::exec {

struct GateActivity {
  std::optional<double> all;                // one activity for every gated layer
  std::map<std::string, double> per_layer;  // or per layer name (those not named: their gates decide)
  nlohmann::json given;                     // the option as given (null: none), for describe()

  // From the option's value; throws frugal::Error naming 'gate_activity'.
  static GateActivity parse(const nlohmann::json& v);
  std::optional<double> of(const std::string& layer) const;
};

// Whether unit k is on at activity a: floor(a x n) of n units on, spread evenly.
bool on_at_activity(int64_t k, double a);

// Zeros the channels of `data` ([samples, channels, plane]) that are off at activity a.
void zero_off_channels(float* data, int64_t samples, int64_t channels, int64_t plane, double a);

}  // namespace frugal::exec
