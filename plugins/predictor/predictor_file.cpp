#include "predictor_file.h"

#include <fstream>

#include "frugal/error.h"
#include "layer_features.h"

namespace frugal::predictor {

std::string machine_name() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      return colon == std::string::npos ? "" : line.substr(line.find_first_not_of(' ', colon + 1));
    }
  return "";
}

nlohmann::json read_predictor_file(const std::string& text, const std::string& origin) {
  nlohmann::json f = nlohmann::json::parse(text, nullptr, false);
  if (f.is_discarded() || !f.is_object()) throw Error(origin + ": not a JSON object (not a predictor file)");
  if (f.value("format", std::string()) != "frugal-predictor")
    throw Error(origin + ": not a frugal predictor file (no \"format\": \"frugal-predictor\")");
  if (!f.contains("format_version") || f["format_version"] != kFormatVersion)
    throw Error(origin + ": predictor file format version " +
                f.value("format_version", nlohmann::json()).dump() + ", this predictor reads version " +
                std::to_string(kFormatVersion) + ": train it again");
  if (f.value("features", nlohmann::json()) != nlohmann::json(feature_names()))
    throw Error(origin + ": the file's feature schema differs from this predictor's: train it again");
  for (const char* key : {"families", "ranges", "step_overhead", "xgboost"})
    if (!f.contains(key)) throw Error(origin + ": predictor file has no \"" + key + "\"");
  return f;
}

namespace {

void check_same(const nlohmann::json& file, const nlohmann::json& table, const char* key,
                const std::string& got, const std::string& origin) {
  const nlohmann::json want = file.value(key, nlohmann::json());
  const nlohmann::json have = table.value(key, nlohmann::json());
  if (want != have)
    throw Error(origin + ": trained for " + key + " " + want.dump() + ", the model is on " + key + " " +
                have.dump() + got + ": train a predictor there");
}

}  // namespace

void check_predictor_matches(const nlohmann::json& file, const nlohmann::json& costs,
                             const std::string& origin) {
  for (const char* key : {"executor", "device", "threads"}) check_same(file, costs, key, "", origin);
  const std::string here = machine_name();
  if (file.value("machine", std::string()) != here)
    throw Error(origin + ": trained on machine \"" + file.value("machine", std::string()) + "\", this is \"" +
                here + "\": train a predictor here");
}

}  // namespace frugal::predictor
