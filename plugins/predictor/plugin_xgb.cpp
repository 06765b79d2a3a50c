// The "xgb" predictor plugin: per-layer times from analytic features and an
// XGBoost tree ensemble (docs/PREDICTOR.md). predict's options:
// {"upto": B, "file": PREDICTOR_FILE}; train's: {"mode", "seed", "min_points"}.
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "frugal/model/onnx_import.h"
#include "frugal/plugin_sdk.hpp"
#include "prediction.h"
#include "predictor_file.h"
#include "training.h"

namespace {

using nlohmann::json;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) frugal::sdk::fail_invalid("predictor file '" + path + "' cannot be read");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string predicted(const void* onnx, size_t onnx_size, const char* costs_json, const char* options_json) {
  const json options = json::parse(frugal::sdk::text_or(options_json, "{}"));
  if (!options.contains("file") || !options["file"].is_string())
    frugal::sdk::fail_invalid("options: give the predictor file as {\"file\": PATH}");
  if (!options.contains("upto") || !options["upto"].is_number_integer())
    frugal::sdk::fail_invalid("options: give the largest batch size as {\"upto\": B}");
  const std::string path = options["file"].get<std::string>();
  const frugal::predictor::PredictorFile file = frugal::predictor::read_predictor_file(read_file(path), path);
  return frugal::predictor::predict_table(file, path, frugal::load_onnx_bytes(onnx, onnx_size, "model"),
                                          json::parse(costs_json), options["upto"].get<int>())
      .dump();
}

frugal_status predict(const void* onnx, size_t onnx_size, const char* costs_json, const char* options_json,
                      frugal_blob* out, frugal_error* err) {
  return frugal::sdk::guard(
      err, [&] { frugal::sdk::put_blob(out, predicted(onnx, onnx_size, costs_json, options_json)); });
}

frugal_status train(size_t n, const void* const* onnx, const size_t* onnx_sizes,
                    const char* const* costs_json, const char* options_json, frugal_blob* out,
                    frugal_error* err) {
  return frugal::sdk::guard(err, [&] {
    std::vector<frugal::predictor::Example> examples;
    for (size_t i = 0; i < n; ++i)
      examples.push_back({frugal::load_onnx_bytes(onnx[i], onnx_sizes[i], "model " + std::to_string(i + 1)),
                          json::parse(costs_json[i])});
    const json options = json::parse(frugal::sdk::text_or(options_json, "{}"));
    frugal::sdk::put_blob(out, frugal::predictor::train_predictor_file(examples, options));
  });
}

const frugal_predictor_api kApi = {sizeof(frugal_predictor_api), &predict, &train};

}  // namespace

FRUGAL_DEFINE_PLUGIN(FRUGAL_KIND_PREDICTOR, "xgb", "1.0",
                     "per-layer time from analytic features and an XGBoost forest or boosted trees", kApi)
