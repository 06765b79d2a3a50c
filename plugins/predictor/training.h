// Training: measured (layer, batch) points of several models become rows of
// features and targets ln(batch seconds / work), and one XGBoost model; the
// result is the predictor file's text (predictor_file.h).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "frugal/model/graph.h"

namespace frugal::predictor {

struct Example {
  Graph model;
  nlohmann::json costs;  // the host's cost table: measured times and the executor's facts
};

// options: {"mode": "forest" | "boosted" (default forest), "seed": S (0), "min_points": N (20)}.
// Throws Error on an empty or too small training set, on examples from
// different executors, devices or thread counts, and on bad options.
std::string train_predictor_file(const std::vector<Example>& examples, const nlohmann::json& options);

}  // namespace frugal::predictor
