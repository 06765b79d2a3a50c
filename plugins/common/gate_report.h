// The run report's "gates" list: per gated conv and per consumer that skips
// off channels, what ran (docs/GATING.md): samples, kernels on out of all
// (activity), and effective MACs beside the dense layer's.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "common/gate_params.h"
#include "common/layer_graph.h"

namespace frugal::exec {

// stats: per layer, what its gated kernel added up over the run.
nlohmann::json gate_report(const LayerGraph& m, const std::vector<GateStats>& stats);

}  // namespace frugal::exec
