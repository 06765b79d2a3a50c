// halfbatch: an out-of-tree frugal planner, as small as a valid one can be.
//
// It splits the request of B samples into two halves (the first ceil(B/2), then
// the rest) and runs every layer, in cost-table order, on the first half and then
// on the second. That is a fixed-batch plan with batch ceil(B/2): not clever, but
// executable by any executor, and a template for writing a real planner.
//
// Input:  the cost table (docs/COSTS.md) and options {"batch": B, ...}.
// Output: a plan (docs/PLAN.md) with "planner", "batch", "budget_bytes" (echoed),
//         "time_per_sample_s" (from the table's per-sample times), "steps" and
//         "peak_bytes", from the plan checker that comes with the SDK
//         (frugal::planning: the executors' memory model, exact in bytes).
#include <algorithm>
#include <frugal/plugin_sdk.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "plan_check.h"  // frugal::planning

namespace {

using nlohmann::json;

// Per-sample seconds of `layer` at batch n (time_s[n-1]), checked.
double per_sample_seconds(const json& layer, int n) {
  const json& t = layer.at("time_s");
  if (!t.is_array() || int(t.size()) < n)
    frugal::sdk::fail_invalid("layer '" + layer.value("name", std::string("?")) +
                              "' has no time_s entry for batch " + std::to_string(n));
  return t[n - 1].get<double>();
}

std::string half_batch_plan(const char* costs_text, const char* options_text) {
  const json costs = json::parse(costs_text);
  const json options = json::parse(frugal::sdk::text_or(options_text, "{}"));
  const int batch = options.at("batch").get<int>();
  if (batch < 1) frugal::sdk::fail_invalid("option batch must be >= 1, got " + std::to_string(batch));
  const json& layers = costs.at("layers");
  if (!layers.is_array() || layers.empty()) frugal::sdk::fail_invalid("cost table has no layers");

  const int half = (batch + 1) / 2;
  json steps = json::array();
  double seconds = 0;
  for (int first = 0; first < batch; first += half) {
    const int count = std::min(half, batch - first);
    for (const json& layer : layers) {
      steps.push_back({{"layer", layer.at("name")}, {"first", first}, {"count", count}});
      seconds += per_sample_seconds(layer, count) * count;
    }
  }
  json plan = {
      {"planner", "halfbatch"}, {"batch", batch}, {"time_per_sample_s", seconds / batch}, {"steps", steps}};
  if (options.contains("budget_bytes")) plan["budget_bytes"] = options["budget_bytes"];
  if (layers[0].contains("out_bytes"))  // a table with memory: the plan's peak, as every executor will see it
    plan["peak_bytes"] = frugal::planner::validate_plan(costs, plan).at("peak_bytes");
  return plan.dump();
}

frugal_status plan(const char* costs, const char* options, frugal_blob* out, frugal_error* err) {
  // guard() turns exceptions (bad JSON, missing keys, fail_invalid) into a status
  // and a message: nothing may throw across the C boundary.
  return frugal::sdk::guard(err, [&] { frugal::sdk::put_blob(out, half_batch_plan(costs, options)); });
}

const frugal_planner_api kApi = {sizeof(frugal_planner_api), &plan};

}  // namespace

FRUGAL_DEFINE_PLUGIN(FRUGAL_KIND_PLANNER, "halfbatch", "1.0",
                     "example: every layer on half the batch, then on the other half", kApi)
