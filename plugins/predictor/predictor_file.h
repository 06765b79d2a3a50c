// The predictor file: frugal's JSON around XGBoost's JSON model, recording what
// the model may be used for (docs/PREDICTOR.md, "The file"):
//
//   {"format": "frugal-predictor", "format_version": 2, "predictor": "xgb", "mode": "forest",
//    "seed": 0, "target": "...", "executor": "cpu", "device": "...", "threads": 2, "machine": "...",
//    "features": [...], "families": [...], "kinds": [...], "ranges": {feature: [min, max]},
//    "training_set": [{"model", "model_hash", "layers", "batches", "points"}], "points": N,
//    "step_overhead": {"by_family": {family: s}, "default": s, "layers": N} (step_overhead.h),
//    "xgboost": {XGBoost's model}}
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace frugal::predictor {

constexpr int kFormatVersion = 2;  // 2: "step_overhead"

// This machine's processor ("model name" of /proc/cpuinfo), "" where unknown:
// a CPU executor's device string names its threads, not the processor.
std::string machine_name();

// Parses and checks a predictor file's text (format, version, feature schema).
// Throws Error naming `origin` and what is wrong.
nlohmann::json read_predictor_file(const std::string& text, const std::string& origin);

// Throws Error unless the file was trained for the table's executor, device,
// threads and this machine, naming both values.
void check_predictor_matches(const nlohmann::json& file, const nlohmann::json& costs,
                             const std::string& origin);

}  // namespace frugal::predictor
