// The predictor file: frugal's JSON around XGBoost's JSON model, recording what
// the model may be used for (docs/PREDICTOR.md, "The file"):
//
//   {"format": "frugal-predictor", "format_version": 3, "predictor": "xgb", "mode": "forest",
//    "seed": 0, "target": "...", "executor": "cpu", "device": "...", "threads": 2, "machine": "...",
//    "features": [...], "families": [...], "kinds": [...], "ranges": {feature: [min, max]},
//    "training_set": [{"model", "model_hash", "layers", "batches", "points"}], "points": N,
//    "step_overhead": {"by_family": {family: s}, "default": s, "layers": N} (step_overhead.h),
//    "xgboost": {XGBoost's model}}
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <utility>

namespace frugal::predictor {

constexpr int kFormatVersion = 4;  // 2: "step_overhead"; 3: its "per_sample"; 4: feature "kind"

// This machine's processor ("model name" of /proc/cpuinfo), "" where unknown:
// a CPU executor's device string names its threads, not the processor.
std::string machine_name();

// A predictor file read: frugal's part parsed ("xgboost" in it is null) and
// XGBoost's model as its JSON text, handed to XGBoost unparsed (a forest is
// tens of MB of JSON: parsing it twice cost most of a prediction's time).
struct PredictorFile {
  nlohmann::json header;
  std::string xgboost;
};

// Parses and checks a predictor file's text (format, version, feature schema).
// Throws Error naming `origin` and what is wrong.
PredictorFile read_predictor_file(const std::string& text, const std::string& origin);

// Where the value of the top-level member `key` of a JSON object's text lies:
// {begin, end}, or {npos, npos} when the text has no such member at depth 1.
// Follows strings and nesting only; the parsers that read the parts validate them.
std::pair<size_t, size_t> top_level_member(const std::string& text, const std::string& key);

// Throws Error unless the file was trained for the table's executor, device,
// threads and this machine, naming both values.
void check_predictor_matches(const nlohmann::json& file, const nlohmann::json& costs,
                             const std::string& origin);

}  // namespace frugal::predictor
