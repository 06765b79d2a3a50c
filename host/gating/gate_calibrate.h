// frugal gate's whole job (docs/GATING.md): gates inserted in front of the
// chosen convs of a dense model and each one's bias calibrated, in graph
// order, on a calibration batch run through an executor, so that the requested
// fraction of kernels is on (gates earlier in the network already switching).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "frugal/model/graph.h"
#include "gating/gate_insert.h"
#include "tensor/tensor.h"

namespace frugal {

struct GateOptions {
  double activity = 0.5;            // fraction of kernels on over the calibration batch, in [0, 1]
  std::vector<std::string> layers;  // Conv node names; empty: every conv that can be gated
  int64_t every = 1;                // with no layers: every k-th conv that can be gated (1st, k+1-th, ...)
  uint64_t seed = 0;                // the gates' random 1x1 weights (and the random calibration input)
  float threshold = 0.5f;           // written into the model; inside (0, 1)
  std::string executor = "cpu";     // runs the calibration batch
  Tensor calibration;               // the calibration input; empty: `batch` random samples from `seed`
  int64_t batch = 8;
};

struct GatedLayerReport {
  std::string conv;
  int64_t channels = 0;
  double activity = 0;  // reached on the calibration batch
};

struct GateResult {
  Graph model;
  std::vector<GatedLayerReport> gated;
  std::vector<GateSite> skipped;  // convs left dense, with the reason (all-convs mode only)
};

// `progress(i, n, conv)` is called before each gate's calibration.
GateResult make_gated_model(
    const Graph& dense, const GateOptions& o,
    const std::function<void(size_t, size_t, const std::string&)>& progress = nullptr);

}  // namespace frugal
