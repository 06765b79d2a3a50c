// Smoothing a measured cost table: per layer, the per-BATCH time is fitted to
//   T(b) = fixed + per_sample * b      (fixed, per_sample >= 0)
// over the measured batch sizes, and every time_s entry is replaced by
// T(b) / b (source "fitted"). Why: a measured table carries noise of 10-50% per
// entry on a shared machine, while a layer's per-sample time changes with the
// batch by less than that on a CPU; the planner, minimising over the table,
// then picks the entries that happened to be measured fast, and the gain it
// predicts is the noise it selected (docs/BENCHMARKS.md, bench-vbs and
// bench-costs). The two-parameter model keeps the real trend (a per-call cost
// shared by the batch) and drops the noise. The raw times stay in the table
// ("measured_time_s"), and each layer gets "time_model": {fixed_s, per_sample_s}.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace frugal {

struct BatchTimeModel {
  double fixed_s = 0, per_sample_s = 0;
};

// Least squares on relative errors (weights 1/T_b^2), fixed and per-sample time
// kept non-negative. One measured size: no fixed part. measured: batch size ->
// per-batch seconds (at least one, sizes >= 1, times finite and > 0). Throws
// frugal::Error on bad input.
BatchTimeModel fit_batch_time(const std::map<int, double>& measured);

// The table with every layer's time_s fitted from its entries whose source is
// one of `sources` (all entries when the table has no "source"): a predicted
// table is fitted over its "measured" and "predicted" entries, so that plans
// do not chase the steps of the predictor's trees. Throws frugal::Error naming
// the layer when a layer has no usable entry.
nlohmann::json fit_cost_times(const nlohmann::json& costs,
                              const std::vector<std::string>& sources = {"measured"});

}  // namespace frugal
