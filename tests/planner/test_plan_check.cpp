// The plan checker against hand-computed figures on a small branched net, and
// its refusals of plans the executor could not run.
#include <catch2/catch.hpp>

#include "plan_check.h"
#include "planner_test_util.h"
#include "planners.h"

using namespace frugal::planner;
using nlohmann::json;

namespace {

// in (10 B/sample) -> a (4) -> b (6) -> c = add-like join of b and the network input (10).
CostTable small_net() {
  std::vector<test::LayerSpec> l = {
      {"a", {""}, 4, {1, 2}, {1.0, 0.75}},
      {"b", {"a"}, 6, {0, 0}, {2.0, 1.5}},
      {"c", {"b", ""}, 10, {0, 0}, {0.5, 0.5}},
  };
  return parse_cost_table(test::make_table_json(l, 10, 2));
}

}  // namespace

TEST_CASE("plan check: whole-batch run, hand-computed peak and time", "[planner]") {
  CostTable t = small_net();
  // a: 20 input + 8 out + 2 ws = 30; b: 20 + 8 + 12 = 40; c: 20 + 12 + 20 = 52.
  PlanCheck c = check_plan(t, 2, {{0, 0, 2}, {1, 0, 2}, {2, 0, 2}});
  CHECK(c.step_bytes == std::vector<uint64_t>{30, 40, 52});
  CHECK(c.peak_bytes == 52);
  CHECK(c.peak_step == 2);
  CHECK(c.time_per_sample_s == Approx(2.75));
  CHECK(c.phases.size() == 1);
}

TEST_CASE("plan check: sample by sample, inputs freed once every consumer has read them", "[planner]") {
  CostTable t = small_net();
  std::vector<Step> s = {{0, 0, 1}, {1, 0, 1}, {2, 0, 1}, {0, 1, 1}, {1, 1, 1}, {2, 1, 1}};
  PlanCheck c = check_plan(t, 2, s);
  CHECK(c.step_bytes == std::vector<uint64_t>{25, 30, 36, 25, 30, 36});
  CHECK(c.peak_bytes == 36);
  CHECK(c.time_total_s == Approx(7.0));
  REQUIRE(c.phases.size() == 2);
  CHECK(c.phases[1].first_step == 3);
  CHECK(c.phases[1].first_sample == 1);
  CHECK(c.phases[1].seconds == Approx(3.5));
  CHECK(c.max_phase_s == Approx(3.5));
  CHECK(test::count_model_peak(t, 2, s) == 36);
}

TEST_CASE("plan check: refuses plans that cannot run", "[planner]") {
  CostTable t = small_net();
  CHECK_THROWS_WITH(
      check_plan(t, 2, {{0, 0, 2}, {2, 0, 2}, {1, 0, 2}}),
      Catch::Contains("step 1 (layer 'c' on samples 0..1)") && Catch::Contains("does not exist yet"));
  CHECK_THROWS_WITH(check_plan(t, 2, {{0, 0, 2}, {1, 0, 2}, {2, 0, 1}}),
                    Catch::Contains("layer 'c' never runs on sample 1"));
  CHECK_THROWS_WITH(check_plan(t, 2, {{0, 0, 2}, {0, 1, 1}}), Catch::Contains("already processed"));
  // Sample 1 before sample 0: the executors keep a tensor's samples in one block, in order.
  CHECK_THROWS_WITH(check_plan(t, 2, {{0, 1, 1}, {0, 0, 1}, {1, 0, 2}, {2, 0, 2}}),
                    Catch::Contains("step 0 (layer 'a' on samples 1..1)") &&
                        Catch::Contains("takes its samples in order") &&
                        Catch::Contains("the next sample of 'a' is 0"));
  CHECK_THROWS_WITH(check_plan(t, 3, {{0, 0, 3}}), Catch::Contains("above the table's batch_max 2"));
  CHECK_THROWS_WITH(check_plan(t, 2, {{0, 1, 2}}), Catch::Contains("outside the request"));
  CHECK_THROWS_WITH(check_plan(t, 2, {{0, 0, 0}}), Catch::Contains("count must be at least 1"));
  CHECK_THROWS_WITH(check_plan_within(t, 2, {{0, 0, 2}, {1, 0, 2}, {2, 0, 2}}, 51),
                    Catch::Contains("needs 52 bytes at step 2 (layer 'c' on samples 0..1), budget is 51"));
}

TEST_CASE("plan check: the JSON entry point", "[planner]") {
  CostTable t = small_net();
  json costs = cost_table_to_json(t);
  json plan = {{"batch", 2}, {"steps", steps_to_json(t, {{0, 0, 2}, {1, 0, 2}, {2, 0, 2}})}};
  json r = validate_plan(costs, plan);
  CHECK(r["peak_bytes"] == 52);
  CHECK(r["time_per_sample_s"].get<double>() == Approx(2.75));
  plan["budget_bytes"] = 40;
  CHECK_THROWS_WITH(validate_plan(costs, plan), Catch::Contains("needs 52 bytes"));
  plan["steps"][0]["layer"] = "zz";
  CHECK_THROWS_WITH(validate_plan(costs, plan), Catch::Contains("'zz', which is not in the cost table"));
  CHECK_THROWS_WITH(validate_plan(costs, json{{"steps", json::array()}}), Catch::Contains("batch"));
}

TEST_CASE("plan check: a network output that a later layer reads is kept to the end", "[planner]") {
  // small_net with 'a' also a network output ("network_output": true), as the
  // profiler marks it: the executors never free a network output.
  json costs = cost_table_to_json(small_net());
  costs["layers"][0]["network_output"] = true;
  const CostTable t = parse_cost_table(costs);
  CHECK(t.kept_to_end(0));
  CHECK_FALSE(t.kept_to_end(1));
  CHECK(t.kept_to_end(2));  // read by nobody
  // Whole batch: c now also holds a's 8 bytes: 20 + 8 + 12 + 20 = 60 (52 unmarked).
  CHECK(check_plan(t, 2, {{0, 0, 2}, {1, 0, 2}, {2, 0, 2}}).step_bytes == std::vector<uint64_t>{30, 40, 60});
  // Sample by sample: a0 stays after b read it; so does a1.
  // c0: 20 + a0 4 + b0 6 + out 10 = 40; then input0 and b0 go: 24; a1: 24 + 4 + 1;
  // b1: 28 + 6; c1: 28 + 6 + 10 = 44.
  const std::vector<Step> s = {{0, 0, 1}, {1, 0, 1}, {2, 0, 1}, {0, 1, 1}, {1, 1, 1}, {2, 1, 1}};
  CHECK(check_plan(t, 2, s).step_bytes == std::vector<uint64_t>{25, 30, 40, 29, 34, 44});
  // The planners plan with it: vbs's predicted peak is the checker's and fits.
  const json plan =
      run_planner("vbs", costs.dump(), json{{"budget_bytes", 44}, {"batch", 2}, {"unit_bytes", 1}}.dump());
  CHECK(plan["peak_bytes"].get<uint64_t>() <= 44);
  CHECK(plan["min_budget_bytes"].get<uint64_t>() == 44);
  // Round trip keeps the flag; a non-boolean is refused by name.
  CHECK(cost_table_to_json(t)["layers"][0]["network_output"] == true);
  costs["layers"][0]["network_output"] = "yes";
  CHECK_THROWS_WITH(parse_cost_table(costs),
                    Catch::Contains("layer 0 'a'") && Catch::Contains("network_output"));
}
