#include "predictor_util.h"

#include <unistd.h>

#include "loader/executor_client.h"
#include "profiler/cost_facts.h"

namespace predictor_test {

frugal::PluginRegistry& registry() {
  static frugal::PluginRegistry r;
  static bool done = false;
  if (!done) r.scan_dirs({std::string(FRUGAL_TEST_BINARY_DIR) + "/plugins"}), done = true;
  return r;
}

const frugal::LoadedPlugin& xgb() { return registry().require(FRUGAL_KIND_PREDICTOR, "xgb"); }

nlohmann::json unmeasured(const frugal::Graph& g, int upto) {
  frugal::ExecutorClient ex(registry().require(FRUGAL_KIND_EXECUTOR, "cpu"), g, {{"threads", 1}});
  return frugal::unmeasured_table(ex, {"cpu", g.name, g.name + "-hash"}, upto);
}

double synthetic_seconds(const nlohmann::json& layer, int b) {
  const size_t i = size_t(b - 1);
  const double macs = layer["macs_per_sample"].get<double>() * b;
  const double bytes = layer["in_bytes"][i].get<double>() + layer["out_bytes"][i].get<double>() +
                       layer["ws_bytes"][i].get<double>();
  return 2e-6 + 1e-10 * macs + 5e-11 * bytes;
}

nlohmann::json with_synthetic_times(nlohmann::json table) {
  const int upto = table["batch_max"].get<int>();
  for (auto& layer : table["layers"]) {
    layer["time_s"] = nlohmann::json::array();
    layer["source"] = nlohmann::json::array();
    for (int b = 1; b <= upto; ++b) {
      layer["time_s"].push_back(synthetic_seconds(layer, b) / b);
      layer["source"].push_back("measured");
    }
    layer["step_overhead_s"] = kSyntheticStepOverhead;
  }
  return table;
}

std::string scratch(const std::string& name) {
  return std::string(FRUGAL_TEST_BINARY_DIR) + "/predictor_test_" + std::to_string(getpid()) + "_" + name;
}

}  // namespace predictor_test
