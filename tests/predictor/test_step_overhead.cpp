// The step overhead of predicted tables: the training set's mean per layer
// family and per-sample rate, worked by hand on small lists; kept where a layer was measured.
#include <catch2/catch.hpp>

#include "profiler/cost_facts.h"
#include "step_overhead.h"

using namespace frugal;
using nlohmann::json;
using predictor::LayerFacts;

namespace {

// A layer of `family` whose batch 1..2 moves `in` and `out` bytes per sample.
LayerFacts of_family(const std::string& family, double in = 0, double out = 0) {
  LayerFacts f;
  f.family = family;
  f.in_bytes = {in, 2 * in};
  f.out_bytes = {out, 2 * out};
  return f;
}

// A table whose layers carry these overheads (null: the layer has none).
json table_with(const std::vector<json>& overheads) {
  json t = {{"layers", json::array()}};
  for (const json& s : overheads) {
    t["layers"].push_back(json::object());
    if (!s.is_null()) t["layers"].back()["step_overhead_s"] = s;
  }
  return t;
}

}  // namespace

TEST_CASE("step overheads: the training set's mean per family, and over all layers", "[predictor][unit]") {
  // conv: 1, 9, 5 -> 5; pool: 2, 3 -> 2.5; all: 1, 2, 3, 5, 9 -> 4. The null is skipped.
  const std::vector<std::vector<LayerFacts>> facts = {
      {of_family("conv"), of_family("pool"), of_family("conv")},
      {of_family("conv"), of_family("pool"), of_family("gemm")}};
  const json a = table_with({1e-6, 2e-6, 9e-6}), b = table_with({5e-6, 3e-6, nullptr});
  const json fitted = predictor::fit_step_overheads(facts, {&a, &b});
  CHECK(fitted["by_family"]["conv"].get<double>() == Approx(5e-6));
  CHECK(fitted["by_family"]["pool"].get<double>() == Approx(2.5e-6));
  CHECK_FALSE(fitted["by_family"].contains("gemm"));
  CHECK(fitted["default"].get<double>() == Approx(4e-6));
  CHECK(fitted["layers"] == 5);

  // A predicted table: its family's mean, the default for a family without
  // one, and a measured overhead kept.
  json costs = table_with({nullptr, nullptr, 7e-6});
  predictor::fill_step_overheads(fitted, {of_family("pool"), of_family("gemm"), of_family("conv")}, costs);
  CHECK(costs["step_overhead_s"].get<double>() == Approx(4e-6));
  CHECK(costs["layers"][0]["step_overhead_s"].get<double>() == Approx(2.5e-6));
  CHECK(costs["layers"][1]["step_overhead_s"].get<double>() == Approx(4e-6));
  CHECK(costs["layers"][2]["step_overhead_s"].get<double>() == Approx(7e-6));
}

TEST_CASE("per-sample step overheads: seconds per byte of a sample's input and output, per family",
          "[predictor][unit]") {
  // conv: (2 + 6) us over (100 + 300) + (300 + 300) bytes = 8e-9 s/B; pool: 1 us over 250 B = 4e-9 s/B;
  // all: 9 us over 1250 B = 7.2e-9 s/B. The layer without one counts nowhere.
  const std::vector<std::vector<LayerFacts>> facts = {
      {of_family("conv", 100, 300), of_family("pool", 200, 50), of_family("conv", 300, 300)},
      {of_family("gemm", 1000, 1000)}};
  json a = table_with({1e-6, 2e-6, 9e-6}), b = table_with({5e-6});
  a["layers"][0]["step_overhead_per_sample_s"] = 2e-6;
  a["layers"][1]["step_overhead_per_sample_s"] = 1e-6;
  a["layers"][2]["step_overhead_per_sample_s"] = 6e-6;
  const json fitted = predictor::fit_step_overheads(facts, {&a, &b})["per_sample"];
  CHECK(fitted["by_family"]["conv"].get<double>() == Approx(8e-9));
  CHECK(fitted["by_family"]["pool"].get<double>() == Approx(4e-9));
  CHECK_FALSE(fitted["by_family"].contains("gemm"));
  CHECK(fitted["default"].get<double>() == Approx(7.2e-9));
  CHECK(fitted["layers"] == 3);

  // Predicted: the family's rate (else the default) times the layer's bytes per sample; a measured one kept.
  json costs = table_with({nullptr, nullptr, nullptr});
  costs["layers"][2]["step_overhead_per_sample_s"] = 3e-7;
  predictor::fill_step_overheads(predictor::fit_step_overheads(facts, {&a, &b}),
                                 {of_family("pool", 500, 500), of_family("gemm", 10, 0), of_family("conv")},
                                 costs);
  CHECK(costs["layers"][0]["step_overhead_per_sample_s"].get<double>() == Approx(4e-9 * 1000));
  CHECK(costs["layers"][1]["step_overhead_per_sample_s"].get<double>() == Approx(7.2e-9 * 10));
  CHECK(costs["layers"][2]["step_overhead_per_sample_s"].get<double>() == Approx(3e-7));
}

TEST_CASE("step overheads: a training set without any gives 0", "[predictor][unit]") {
  const std::vector<std::vector<LayerFacts>> facts = {{of_family("conv")}};
  const json a = table_with({nullptr});
  const json fitted = predictor::fit_step_overheads(facts, {&a});
  CHECK(fitted["default"] == 0.0);
  CHECK(fitted["layers"] == 0);
  CHECK(fitted["per_sample"]["default"] == 0.0);
  json costs = table_with({nullptr});
  predictor::fill_step_overheads(fitted, facts[0], costs);
  CHECK(costs["layers"][0]["step_overhead_s"] == 0.0);
  CHECK(costs["layers"][0]["step_overhead_per_sample_s"] == 0.0);
}

TEST_CASE("step overheads: a measured table's are merged with its times", "[predictor][unit]") {
  json table = {{"executor", "cpu"}, {"batch_max", 2}, {"layers", json::array()}};
  json measured = table;
  for (const char* name : {"a", "b"}) {
    table["layers"].push_back({{"name", name}, {"time_s", json::array()}, {"source", json::array()}});
    measured["layers"].push_back({{"name", name}, {"time_s", {1e-3}}, {"source", {"measured"}}});
  }
  measured["layers"][0]["step_overhead_s"] = 2e-5;
  merge_measured(table, measured);
  CHECK(table["layers"][0]["step_overhead_s"] == 2e-5);
  CHECK_FALSE(table["layers"][1].contains("step_overhead_s"));
  CHECK(table["layers"][1]["time_s"] == json({1e-3}));
}
