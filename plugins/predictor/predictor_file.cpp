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

namespace {

bool space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

size_t skip_space(const std::string& t, size_t i) {
  while (i < t.size() && space(t[i])) ++i;
  return i;
}

// i at an opening quote: the index after the closing one (t.size() when unterminated).
size_t string_end(const std::string& t, size_t i) {
  for (++i; i < t.size(); ++i) {
    if (t[i] == '\\')
      ++i;
    else if (t[i] == '"')
      return i + 1;
  }
  return t.size();
}

// i at a value's first character: the index after its last.
size_t value_end(const std::string& t, size_t i) {
  if (i >= t.size()) return i;
  if (t[i] == '"') return string_end(t, i);
  if (t[i] != '{' && t[i] != '[') {
    while (i < t.size() && !space(t[i]) && t[i] != ',' && t[i] != '}' && t[i] != ']') ++i;
    return i;
  }
  int depth = 0;
  while (i < t.size()) {
    if (t[i] == '"') {
      i = string_end(t, i);
      continue;
    }
    if (t[i] == '{' || t[i] == '[') ++depth;
    if ((t[i] == '}' || t[i] == ']') && --depth == 0) return i + 1;
    ++i;
  }
  return t.size();
}

}  // namespace

std::pair<size_t, size_t> top_level_member(const std::string& text, const std::string& key) {
  const std::pair<size_t, size_t> none = {std::string::npos, std::string::npos};
  size_t i = skip_space(text, 0);
  if (i >= text.size() || text[i] != '{') return none;
  i = skip_space(text, i + 1);
  while (i < text.size() && text[i] == '"') {
    const size_t name_end = string_end(text, i);
    const bool match = name_end == i + key.size() + 2 && text[name_end - 1] == '"' &&
                       text.compare(i + 1, key.size(), key) == 0;
    i = skip_space(text, name_end);
    if (i >= text.size() || text[i] != ':') return none;
    const size_t begin = skip_space(text, i + 1), end = value_end(text, begin);
    if (match) return {begin, end};
    i = skip_space(text, end);
    if (i >= text.size() || text[i] != ',') return none;
    i = skip_space(text, i + 1);
  }
  return none;
}

PredictorFile read_predictor_file(const std::string& text, const std::string& origin) {
  const auto [begin, end] = top_level_member(text, "xgboost");
  PredictorFile out;
  std::string header = text;
  if (begin != std::string::npos) {
    out.xgboost = text.substr(begin, end - begin);
    header = text.substr(0, begin) + "null" + text.substr(end);
  }
  nlohmann::json f = nlohmann::json::parse(header, nullptr, false);
  if (f.is_discarded() || !f.is_object()) throw Error(origin + ": not a JSON object (not a predictor file)");
  if (f.value("format", std::string()) != "frugal-predictor")
    throw Error(origin + ": not a frugal predictor file (no \"format\": \"frugal-predictor\")");
  if (!f.contains("format_version") || f["format_version"] != kFormatVersion)
    throw Error(origin + ": predictor file format version " +
                f.value("format_version", nlohmann::json()).dump() + ", this predictor reads version " +
                std::to_string(kFormatVersion) + ": train it again");
  if (f.value("features", nlohmann::json()) != nlohmann::json(feature_names()))
    throw Error(origin + ": the file's feature schema differs from this predictor's: train it again");
  for (const char* key : {"families", "kinds", "ranges", "step_overhead", "xgboost"})
    if (!f.contains(key)) throw Error(origin + ": predictor file has no \"" + key + "\"");
  out.header = std::move(f);
  return out;
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
