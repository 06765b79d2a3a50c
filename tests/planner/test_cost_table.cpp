// Cost-table validation: every malformed table is refused with a message that
// names the layer, the field and the index.
#include <catch2/catch.hpp>

#include "cost_table.h"
#include "planner_test_util.h"
#include "planners.h"

using namespace frugal::planner;
using nlohmann::json;

namespace {

json good_table() {
  std::vector<test::LayerSpec> l = {
      {"conv1", {""}, 8, {3, 6, 9}, {3, 2, 1.5}},
      {"conv2", {"conv1"}, 4, {1, 2, 3}, {2, 1.5, 1.2}},
      {"fc", {"conv2"}, 2, {0, 0, 0}, {1, 0.8, 0.7}},
  };
  return test::make_table_json(l, 12, 3);
}

std::string error_of(const json& t) {
  try {
    parse_cost_table(t, "costs.json");
  } catch (const frugal::Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("cost table: a good table parses and derives the input size and consumers", "[planner]") {
  CostTable t = parse_cost_table(good_table());
  CHECK(t.size() == 3);
  CHECK(t.batch_max == 3);
  CHECK(t.input_bytes_per_sample == 12);
  CHECK(t.consumers[0] == std::vector<int>{1});
  CHECK(t.consumers[2].empty());
  CHECK(t.time(1, 2) == 1.5);
  CHECK(parse_cost_table(cost_table_to_json(t)).layers[2].ws_bytes == t.layers[2].ws_bytes);
}

TEST_CASE("cost table: bad tables name what is wrong", "[planner]") {
  json t = good_table();
  SECTION("batch 0") {
    t["batch_max"] = 0;
    CHECK_THAT(error_of(t), Catch::Contains("costs.json") && Catch::Contains("batch_max"));
  }
  SECTION("no layers") {
    t["layers"] = json::array();
    CHECK_THAT(error_of(t), Catch::Contains("empty"));
  }
  SECTION("missing field") {
    t["layers"][1].erase("ws_bytes");
    CHECK_THAT(error_of(t), Catch::Contains("layer 1 'conv2'") && Catch::Contains("ws_bytes"));
  }
  SECTION("array shorter than batch_max") {
    t["layers"][2]["time_s"] = {1.0, 0.8};
    CHECK_THAT(error_of(t),
               Catch::Contains("'fc'") && Catch::Contains("time_s") && Catch::Contains("2 entries"));
  }
  SECTION("negative time") {
    t["layers"][1]["time_s"][2] = -1.0;
    CHECK_THAT(error_of(t), Catch::Contains("'conv2' time_s[2] (batch 3) is negative"));
  }
  SECTION("NaN time") {
    t["layers"][1]["time_s"][0] = std::nan("");  // a float NaN inside the JSON value
    CHECK_THAT(error_of(t), Catch::Contains("'conv2' time_s[0]"));
  }
  SECTION("NaN bytes") {
    t["layers"][0]["ws_bytes"][1] = std::nan("");
    CHECK_THAT(error_of(t), Catch::Contains("'conv1' ws_bytes[1] (batch 2)"));
  }
  SECTION("negative bytes") {
    t["layers"][0]["ws_bytes"][1] = -5;
    CHECK_THAT(error_of(t), Catch::Contains("'conv1' ws_bytes[1] (batch 2) is negative"));
  }
  SECTION("unknown input") {
    t["layers"][1]["inputs"] = {"conv9"};
    CHECK_THAT(error_of(t), Catch::Contains("'conv2' reads 'conv9', which is not a layer"));
  }
  SECTION("out of order or cyclic") {
    t["layers"][1]["inputs"] = {"fc"};
    CHECK_THAT(error_of(t), Catch::Contains("comes after it") && Catch::Contains("cycle"));
    t["layers"][1]["inputs"] = {"conv2"};
    CHECK_THAT(error_of(t), Catch::Contains("reads its own output"));
  }
  SECTION("duplicate names") {
    t["layers"][2]["name"] = "conv1";
    CHECK_THAT(error_of(t), Catch::Contains("'conv1' is used twice"));
  }
  SECTION("boundary mismatch") {
    t["layers"][2]["in_bytes"] = {5, 10, 15};
    CHECK_THAT(error_of(t),
               Catch::Contains("'fc' in_bytes[0] = 5 is not the sum of its inputs' out_bytes[0] = 4"));
  }
  SECTION("activations not proportional to the batch") {
    t["layers"][1]["out_bytes"] = {4, 8, 13};
    CHECK_THAT(error_of(t), Catch::Contains("'conv2' out_bytes[2] (batch 3) = 13 is not 3 x out_bytes[0]"));
  }
  SECTION("bad source") {
    t["layers"][0]["source"] = {"measured", "guessed", "predicted"};
    CHECK_THAT(error_of(t), Catch::Contains("'conv1' source[1]"));
  }
  SECTION("not json") {
    CHECK_THROWS_WITH(parse_cost_table_text("{ nope", "costs.json"),
                      Catch::Contains("costs.json: not valid JSON"));
  }
  SECTION("null, a failed measurement written to JSON") {
    t["layers"][1]["time_s"][2] = nullptr;
    CHECK_THAT(error_of(t), Catch::Contains("costs.json: layer 1 'conv2' time_s[2] (batch 3) is null"));
    t = good_table();
    t["layers"][2]["ws_bytes"][0] = nullptr;
    CHECK_THAT(error_of(t), Catch::Contains("layer 2 'fc' ws_bytes[0] (batch 1) is null"));
  }
  SECTION("a number beyond a double (1e400) in the text") {
    std::string text = good_table().dump();
    const std::string first_time = "\"time_s\":[";
    text.insert(text.find(first_time) + first_time.size(), "1e400,");
    // nlohmann::json throws out_of_range, not parse_error, for it: still this file's message.
    CHECK_THROWS_WITH(parse_cost_table_text(text, "costs.json"),
                      Catch::Contains("costs.json: not valid JSON") && Catch::Contains("1e400"));
  }
}

TEST_CASE("planner options: bad options are refused by name", "[planner]") {
  const std::string t = good_table().dump();
  CHECK_THROWS_WITH(run_planner("vbs", t, R"({"batch": 2})"), Catch::Contains("budget_bytes"));
  CHECK_THROWS_WITH(run_planner("vbs", t, R"({"budget_bytes": 1000})"), Catch::Contains("batch"));
  CHECK_THROWS_WITH(run_planner("vbs", t, R"({"budget_bytes": 1000, "batch": 0})"),
                    Catch::Contains("positive"));
  CHECK_THROWS_WITH(run_planner("vbs", t, R"({"budget_bytes": -3, "batch": 2})"),
                    Catch::Contains("budget_bytes"));
  CHECK_THROWS_WITH(run_planner("vbs", t, R"({"budget": 1000, "batch": 2})"),
                    Catch::Contains("unknown option \"budget\""));
  CHECK_THROWS_WITH(run_planner("vbs", t, R"({"budget_bytes": 1000, "batch": 2, "methods": ["magic"]})"),
                    Catch::Contains("unknown method"));
  CHECK_THROWS_WITH(run_planner("vbs", t, R"({"budget_bytes": 1000, "batch": 2, "latency_bound_s": -1})"),
                    Catch::Contains("latency_bound_s"));
  CHECK_THROWS_WITH(
      run_planner("vbs", t, R"({"budget_bytes": 1000, "batch": 2, "unit_bytes": 1, "max_table_bytes": 100})"),
      Catch::Contains("max_table_bytes"));
  CHECK_THROWS_WITH(
      run_planner("vbs", t, R"({"budget_bytes": 100000000, "batch": 1000, "unit_bytes": 10000})"),
      Catch::Contains("choose a smaller batch"));
}

TEST_CASE("planner: a request larger than batch_max runs in several steps per layer", "[planner]") {
  json p = run_planner("vbs", good_table().dump(), R"({"budget_bytes": 100000, "batch": 7})");
  CostTable t = parse_cost_table(good_table());
  PlanCheck c = check_plan(t, 7, steps_from_json(t, p));
  CHECK(c.peak_bytes == p["peak_bytes"]);
  for (const json& l : p["layers"]) {
    int sum = 0;
    for (int b : l["batches"]) {
      CHECK(b <= 3);
      sum += b;
    }
    CHECK(sum == 7);
  }
}

TEST_CASE("cost table: step_overhead_s, per layer or for the whole table, priced per step", "[planner]") {
  json j = good_table();
  j["step_overhead_s"] = 0.5;             // every layer's default
  j["layers"][1]["step_overhead_s"] = 2;  // conv2's own
  const CostTable t = parse_cost_table(j);
  CHECK(t.layers[0].step_overhead_s == 0.5);
  CHECK(t.layers[1].step_overhead_s == 2.0);
  CHECK(t.layers[2].step_overhead_s == 0.5);
  // A step of conv2 on 2 samples: 2 x 1.5 s + 2 s, i.e. 2.5 s per sample.
  CHECK(t.time(1, 2) == Approx(2.5));
  CHECK(t.time(1, 1) == Approx(4.0));
  // The checker charges it once per step: conv1 in one step of 3, conv2 in 3
  // steps of 1, fc in one step of 3.
  const std::vector<Step> steps = {{0, 0, 3}, {1, 0, 1}, {1, 1, 1}, {1, 2, 1}, {2, 0, 3}};
  const PlanCheck c = check_plan(t, 3, steps);
  CHECK(c.time_total_s == Approx(3 * 1.5 + 0.5 + 3 * (2 + 2) + 3 * 0.7 + 0.5));
  // Written back per layer (the table-level default resolved).
  const CostTable back = parse_cost_table(cost_table_to_json(t));
  CHECK(back.layers[2].step_overhead_s == 0.5);
  CHECK(back.layers[1].step_overhead_s == 2.0);

  json bad = good_table();
  bad["layers"][1]["step_overhead_s"] = -1;
  CHECK_THAT(error_of(bad), Catch::Contains("costs.json: layer 1 'conv2' step_overhead_s is negative"));
  bad["layers"][1]["step_overhead_s"] = nullptr;
  CHECK_THAT(error_of(bad), Catch::Contains("layer 1 'conv2' step_overhead_s is null"));
  bad["layers"][1]["step_overhead_s"] = "1ms";
  CHECK_THAT(error_of(bad), Catch::Contains("layer 1 'conv2' step_overhead_s is not a number"));
  json bad_table = good_table();
  bad_table["step_overhead_s"] = -0.25;
  CHECK_THAT(error_of(bad_table), Catch::Contains("the table's \"step_overhead_s\" is negative"));
}

TEST_CASE("cost table: step_overhead_per_sample_s is priced per sample of every step", "[planner]") {
  json j = good_table();
  j["layers"][1]["step_overhead_s"] = 2;
  j["layers"][1]["step_overhead_per_sample_s"] = 0.25;
  const CostTable t = parse_cost_table(j);
  CHECK(t.layers[1].step_overhead_per_sample_s == 0.25);
  CHECK(t.layers[0].step_overhead_per_sample_s == 0);
  // A step of conv2 on 2 samples: 2 x (1.5 + 0.25) s + 2 s.
  CHECK(t.time(1, 2) == Approx((2 * 1.75 + 2) / 2));
  const std::vector<Step> steps = {{0, 0, 3}, {1, 0, 1}, {1, 1, 2}, {2, 0, 3}};
  CHECK(check_plan(t, 3, steps).time_total_s == Approx(3 * 1.5 + (2.25 + 2) + (2 * 1.75 + 2) + 3 * 0.7));
  CHECK(parse_cost_table(cost_table_to_json(t)).layers[1].step_overhead_per_sample_s == 0.25);
  json bad = good_table();
  bad["layers"][1]["step_overhead_per_sample_s"] = -1;
  CHECK_THAT(error_of(bad), Catch::Contains("layer 1 'conv2' step_overhead_per_sample_s is negative"));
}
