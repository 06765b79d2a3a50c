// Shared by the predictor tests: the build's plugins, cost tables of zoo models
// with the CPU executor's facts and exact bytes, and synthetic times.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "frugal/model/graph.h"
#include "loader/plugin_registry.h"

namespace predictor_test {

frugal::PluginRegistry& registry();  // the build's plugin folder
const frugal::LoadedPlugin& xgb();

// The CPU executor's table of `g` (1 thread) for batch 1..upto, no times.
nlohmann::json unmeasured(const frugal::Graph& g, int upto);

// Per-batch seconds of the synthetic law the tests train on: linear in the
// layer's MACs and bytes moved (in + out + ws) plus a fixed cost.
double synthetic_seconds(const nlohmann::json& layer, int b);

// The step overhead every layer of a synthetic table carries.
constexpr double kSyntheticStepOverhead = 4e-6;

// `table` with every time set by the synthetic law and marked "measured", and
// every layer's step_overhead_s kSyntheticStepOverhead.
nlohmann::json with_synthetic_times(nlohmann::json table);

// A scratch file path under the build tree.
std::string scratch(const std::string& name);

}  // namespace predictor_test
