// Calls a folder plugin: Graph in, folded Graph plus its JSON report out.
#pragma once

#include <nlohmann/json.hpp>

#include "frugal/model/graph.h"
#include "loader/plugin_registry.h"

namespace frugal {

struct FoldedModel {
  Graph graph;
  nlohmann::json report;  // {"bn_total","bn_folded","nodes":[...]} (see plugin.h)
};

// Throws Error naming the plugin when it fails or answers with something unusable.
// options: JSON object or null (passed as NULL).
FoldedModel fold_model(const LoadedPlugin& folder, const Graph& model,
                       const nlohmann::json& options = nullptr);

}  // namespace frugal
