// Calls a predictor plugin: model, partly measured cost table and options in,
// completed cost table out; and training, where the plugin's table has it.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "frugal/model/graph.h"
#include "loader/plugin_registry.h"

namespace frugal {

// options: {"upto":B,...}. Throws Error naming the plugin when it fails or
// returns an empty / non-JSON / non-object table.
nlohmann::json predict_costs(const LoadedPlugin& predictor, const Graph& model, const nlohmann::json& costs,
                             const nlohmann::json& options);

// One training example: a model and its cost table with measured times.
struct TrainingExample {
  const Graph* model = nullptr;
  nlohmann::json costs;
};

// The predictor file's bytes. Throws Error naming the plugin when its table has
// no train (an older predictor), when it fails, or when it returns nothing.
std::string train_predictor(const LoadedPlugin& predictor, const std::vector<TrainingExample>& examples,
                            const nlohmann::json& options);

}  // namespace frugal
