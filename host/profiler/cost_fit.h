// Smoothing a measured cost table: per layer, the per-BATCH time is fitted to
//   T(b) = fixed + per_sample * b + idle_slot * idle(b) + spill * max(0, b - spill_from)
// (all parts >= 0) over the measured batch sizes, and every time_s entry is
// replaced by T(b) / b (source "fitted"). Why: a measured table carries noise of
// 10-50% per entry on a shared machine, while a layer's per-sample time changes
// with the batch by less than that on a CPU; the planner, minimising over the
// table, then picks the entries that happened to be measured fast, and the gain
// it predicts is the noise it selected (docs/BENCHMARKS.md, bench-vbs and
// bench-costs). The model keeps the real trends and drops the noise. The raw
// times stay in the table ("measured_time_s"), and each layer gets
// "time_model": {fixed_s, per_sample_s, idle_slot_s, threads, spill_s,
// spill_from}.
// idle(b): kernels that share a batch among `threads` threads sample by sample
// run it in rounds of `threads` samples; at b >= threads a last round with
// b % threads samples leaves threads - b % threads slots idle, and costs about
// what a full round costs (oneDNN's convs at 2 threads: batch 3 takes the time
// of batch 4). A straight line averages that away, and a planner then picks
// odd batches priced like even ones. Below `threads` samples kernels split the
// work another way, so idle(b) = 0 there, and with one thread always.
// spill: a layer whose inputs and output stop fitting in the cache beyond some
// batch pays more per sample from there on (ResNet-50's adds and relus at 56x56:
// 0.05 ms per sample at batch 1, 0.22 from batch 5 on). A straight line through
// both regimes under-prices the large batches (ResNet-50 at batch 12 by 7%,
// whole plans by 16%). The knee is taken from the data, and only when it pays
// for its two extra parameters (Bayesian information criterion), with at least
// 2 measured sizes at or below it and 3 above.
#pragma once

#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace frugal {

struct BatchTimeModel {
  double fixed_s = 0, per_sample_s = 0, idle_slot_s = 0;
  int threads = 1;
  double spill_s = 0;                 // per sample beyond spill_from
  int spill_from = 0;                 // 0: no knee
  double batch_seconds(int b) const;  // T(b)
};

// Idle thread slots in the last round of a batch of b (see above).
int idle_slots(int b, int threads);

// Least squares on relative errors (weights 1/T_b^2), every part kept
// non-negative (the best fit over the subsets of parts, each solved exactly:
// the constrained optimum of a convex problem is the unconstrained one on its
// support). Ties go to fewer parts: one measured size is proportional to the
// batch. A knee (spill) is added where it lowers the information criterion. measured: batch size -> per-batch
// seconds (at least one, sizes >= 1, times finite and > 0); threads >= 1. Throws frugal::Error on bad input.
BatchTimeModel fit_batch_time(const std::map<int, double>& measured, int threads = 1);

// The table with every layer's time_s fitted from its entries whose source is
// one of `sources` (all entries when the table has no "source"): a predicted
// table is fitted over its "measured" and "predicted" entries, so that plans
// do not chase the steps of the predictor's trees. Throws frugal::Error naming
// the layer when a layer has no usable entry. The thread count is the table's
// "threads" (1 when absent or not a number).
nlohmann::json fit_cost_times(const nlohmann::json& costs,
                              const std::vector<std::string>& sources = {"measured"});

}  // namespace frugal
