// One kernel gate (docs/GATING.md) as an executor's gated kernels need it:
// the gate's 1x1 weights and bias, applied to the global average of the
// layer's input (pool first: exactly the LKAM's function, since the pool and
// the 1x1 conv commute), the threshold and the comparison. And the per-layer
// counts a gated kernel adds up while it runs, for the run report.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "frugal/model/gating.h"
#include "frugal/model/graph.h"

namespace frugal::exec {

struct GateParams {
  int64_t kernels = 0, channels = 0;  // K switches over the C input channels
  std::vector<float> weights;         // [K, C]
  std::vector<float> bias;            // [K]
  float threshold = 0.5f;
  bool strict = false;  // on iff sw > t (else sw >= t)

  // From the model's initializers; `threshold` replaces the model's when given.
  static GateParams from(const Graph& g, const GateMatch& m, std::optional<float> threshold);
  // Whether kernel k is on for a sample whose input channels average to `pooled` [C].
  bool on(int64_t k, const float* pooled) const;
  // The kernels on for that sample, ascending, into `on` (room for `kernels`); returns how
  // many. The same arithmetic as on(), several kernels at a time.
  int64_t kernels_on(const float* pooled, int32_t* on) const;
  // The same over kernels [k0, k1) (`on` with room for k1 - k0): threads may share a large gate.
  int64_t kernels_on(const float* pooled, int32_t* on, int64_t k0, int64_t k1) const;
};

// What a gated kernel did over one call: samples, kernels on / in all, and the
// multiply-accumulates it ran (gate included).
struct GateStats {
  int64_t samples = 0, kernels_on = 0, kernels = 0, macs = 0;
  void add(const GateStats& o) {
    samples += o.samples;
    kernels_on += o.kernels_on;
    kernels += o.kernels;
    macs += o.macs;
  }
};

}  // namespace frugal::exec
