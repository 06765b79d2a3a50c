// Calls a predictor plugin: model, partly measured cost table and options in,
// completed cost table out.
#pragma once

#include <nlohmann/json.hpp>

#include "frugal/model/graph.h"
#include "loader/plugin_registry.h"

namespace frugal {

// options: {"upto":B,...}. Throws Error naming the plugin when it fails or
// returns an empty / non-JSON / non-object table.
nlohmann::json predict_costs(const LoadedPlugin& predictor, const Graph& model, const nlohmann::json& costs,
                             const nlohmann::json& options);

}  // namespace frugal
