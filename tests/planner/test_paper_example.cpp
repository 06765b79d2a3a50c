// The VBS paper's worked example (section III): three layers, in = out = b,
// ws = b, 4b, b, memory 7, time(., 1) = 4 and time(., 2) = 3 per sample.
#include <catch2/catch.hpp>

#include "planner_test_util.h"
#include "planners.h"

using namespace frugal::planner;
using nlohmann::json;

namespace {

json paper_table() {
  std::vector<test::LayerSpec> l = {
      {"L1", {""}, 1, {1, 2}, {4, 3}},
      {"L2", {"L1"}, 1, {4, 8}, {4, 3}},
      {"L3", {"L2"}, 1, {1, 2}, {4, 3}},
  };
  return test::make_table_json(l, 1, 2);
}

json plan(const std::string& planner, json options) {
  return run_planner(planner, paper_table().dump(), options.dump());
}

std::vector<int> batches(const json& p, int layer) {
  return p["layers"][layer]["batches"].get<std::vector<int>>();
}

}  // namespace

TEST_CASE("paper example: fixed batch runs at 1 and takes 12 per sample", "[planner]") {
  json p = plan("fbs", {{"budget_bytes", 7}, {"batch", 2}, {"unit_bytes", 1}});
  CHECK(p["fbs_batch"] == 1);
  CHECK(p["time_per_sample_s"].get<double>() == Approx(12.0));
  CHECK(p["peak_bytes"] == 7);
}

TEST_CASE("paper example: VBS takes 10 per sample (L1 at 2, L2 twice at 1, L3 at 2)", "[planner]") {
  for (const char* method : {"paper", "extended"}) {
    INFO(method);
    json p = plan("vbs", {{"budget_bytes", 7}, {"batch", 2}, {"unit_bytes", 1}, {"methods", {method}}});
    CHECK(p["method"] == method);
    CHECK(p["time_per_sample_s"].get<double>() == Approx(10.0));
    CHECK(batches(p, 0) == std::vector<int>{2});
    CHECK(batches(p, 1) == std::vector<int>{1, 1});
    CHECK(batches(p, 2) == std::vector<int>{2});
    CHECK(p["peak_bytes"] == 7);
    // Table III: L2 uses all 7 units in both plans; L1 and L3 leave 1 unit (VBS) or 3 (FBS).
    CHECK(p["layers"][0]["unused_bytes"] == 1);
    CHECK(p["layers"][1]["unused_bytes"] == 0);
  }
  json full = plan("vbs", {{"budget_bytes", 7}, {"batch", 2}, {"unit_bytes", 1}});
  CHECK(full["time_per_sample_s"].get<double>() == Approx(10.0));
  CHECK(full["baselines"]["fbs"]["time_per_sample_s"].get<double>() == Approx(12.0));
  CHECK(full["gain_vs_fbs"].get<double>() == Approx(1.0 / 6.0));
  CHECK(full["layers"][0]["fbs_unused_bytes"] == 3);
}

TEST_CASE("paper example: the plan's steps are the paper's schedule", "[planner]") {
  json p = plan("vbs", {{"budget_bytes", 7}, {"batch", 2}, {"unit_bytes", 1}});
  json expect = json::array({{{"layer", "L1"}, {"first", 0}, {"count", 2}},
                             {{"layer", "L2"}, {"first", 0}, {"count", 1}},
                             {{"layer", "L2"}, {"first", 1}, {"count", 1}},
                             {{"layer", "L3"}, {"first", 0}, {"count", 2}}});
  CHECK(p["steps"] == expect);
  json check = validate_plan(paper_table(), p);
  CHECK(check["peak_bytes"] == 7);
  CHECK(check["time_per_sample_s"].get<double>() == Approx(10.0));
}

TEST_CASE("paper example: a budget below 7 is refused and the message gives the minimum", "[planner]") {
  for (const char* planner : {"vbs", "fbs", "greedy"}) {
    INFO(planner);
    CHECK_THROWS_AS(plan(planner, {{"budget_bytes", 6}, {"batch", 2}, {"unit_bytes", 1}}), BudgetError);
  }
  CHECK_THROWS_WITH(plan("vbs", {{"budget_bytes", 6}, {"batch", 2}, {"unit_bytes", 1}}),
                    Catch::Contains("needs at least 7 bytes"));
  CHECK_THROWS_WITH(plan("fbs", {{"budget_bytes", 6}, {"batch", 2}}),
                    Catch::Contains("batch 1 needs 7 bytes"));
}

TEST_CASE(
    "paper example: with 12 bytes every layer runs at 2 (9 per sample); the budget table has both plans",
    "[planner]") {
  json p = plan("vbs", {{"budget_bytes", 12}, {"batch", 2}, {"unit_bytes", 1}});
  CHECK(p["time_per_sample_s"].get<double>() == Approx(9.0));
  json t = plan("vbs", {{"budget_bytes", 12}, {"batch", 2}, {"unit_bytes", 1}, {"table", true}});
  // One DP run gives the plan for every budget: 7 -> 10 per sample, 12 -> 9.
  REQUIRE(t["table"].size() == 2);
  CHECK(t["table"][0]["budget_bytes"] == 7);
  CHECK(t["table"][0]["time_per_sample_s"].get<double>() == Approx(10.0));
  CHECK(t["table"][1]["budget_bytes"] == 12);
  CHECK(t["table"][1]["time_per_sample_s"].get<double>() == Approx(9.0));
}

TEST_CASE("paper example: a latency bound per phase forces smaller phases", "[planner]") {
  // Whole request in one phase takes 20 s; a 13 s bound allows only one sample per phase.
  json p = plan("vbs", {{"budget_bytes", 12}, {"batch", 2}, {"unit_bytes", 1}, {"latency_bound_s", 13.0}});
  CHECK(p["time_per_sample_s"].get<double>() == Approx(12.0));
  CHECK(p["max_phase_s"].get<double>() <= 13.0);
  CHECK(p["phases"].size() == 2);
  CHECK_THROWS_WITH(plan("vbs", {{"budget_bytes", 12}, {"batch", 2}, {"latency_bound_s", 11.0}}),
                    Catch::Contains("latency"));
}
