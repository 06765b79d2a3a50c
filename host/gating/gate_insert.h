// Making gated networks from dense ones (frugal gate, docs/GATING.md): an LKAM
// gate (pool first, then a 1x1 conv with random weights, Sigmoid, a threshold)
// inserted in front of chosen convs, and its bias calibrated so that a given
// fraction of kernels is on over a calibration batch. The result is ordinary
// ONNX (opset >= 12 for GreaterOrEqual) that frugal recognises
// (frugal/model/gating.h) and any ONNX runtime runs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "frugal/model/graph.h"

namespace frugal {

// A conv a gate can be put in front of, or why not (reason non-empty).
struct GateSite {
  std::string conv;
  int64_t channels = 0;
  std::string reason;
};

// Every Conv of `g` in graph order, each with the reason it cannot be gated
// (grouped, its output reaches an op that does not keep zeros, ...), found by
// trying: a gate is inserted in a copy and must be recognised.
std::vector<GateSite> gate_sites(const Graph& g);

// One inserted gate: its conv, the Mul, the pre-sigmoid value z ([N, K, 1, 1])
// and the bias initializer that calibration sets.
struct InsertedGate {
  std::string conv, mul, z, bias;
  int64_t channels = 0;
};

// Inserts a gate for each conv in `convs` (every one must be a site without a
// reason, else Error naming it and the reason): 1x1 weights uniform in
// +-sqrt(3 / C) from `seed`, bias 0, the given threshold in [0, 1].
std::vector<InsertedGate> insert_gates(Graph& g, const std::vector<std::string>& convs, uint64_t seed,
                                       float threshold);

// Sets the gate's bias so that round(activity * n) of the n values in `z` (the
// gate's pre-sigmoid values over a calibration batch, at its current bias)
// reach the threshold: one shift for the whole layer, placed halfway between
// the two values around the cut so that rounding does not flip a switch.
// Returns the activity reached on `z`. Threshold must be inside (0, 1).
double calibrate_gate(Graph& g, const InsertedGate& gate, const std::vector<float>& z, double activity,
                      float threshold);

}  // namespace frugal
