// frugal bench-vbs as a user runs it on a subset of networks (the default set
// takes many minutes and is never run here).
#include <map>

#include "workflow_test_util.h"

// bench-vbs on a subset (the default set of seven 224x224 networks takes many
// minutes: never in CI): every plan's measured peak is its predicted one, within
// the budget; VBS is never predicted slower than FBS or greedy; fitted tables by
// default. The default set is the one of docs/BENCHMARKS.md.
TEST_CASE("frugal bench-vbs --nets: a subset, fitted tables, peaks as predicted", "[workflow]") {
  ScratchDir dir("benchvbs");
  FrugalRun r = frugal_in(dir,
                          "bench-vbs --nets toy_linear --batch 4 --budgets 2 --repeat 1 --threads 1 --quiet "
                          "--json b.json");
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK(contains(r.output, "fitted cost tables"));
  const nlohmann::json b = read_json(dir / "b.json");
  CHECK(b["fitted"] == true);
  REQUIRE(b["rows"].size() == 6);  // 2 budgets x vbs, fbs, greedy
  std::map<long long, std::map<std::string, nlohmann::json>> by_budget;
  for (const auto& row : b["rows"]) by_budget[row["budget_bytes"].get<long long>()][row["planner"]] = row;
  REQUIRE(by_budget.size() == 2);
  for (const auto& [budget, rows] : by_budget) {
    INFO("budget " << budget);
    for (const auto& [planner, row] : rows) {
      INFO(planner);
      if (!row.contains("peak_bytes")) continue;  // no plan under this budget
      CHECK(row["peak_bytes"] == row["predicted_peak_bytes"]);
      CHECK(row["peak_bytes"].get<long long>() <= budget);
    }
    REQUIRE(rows.at("vbs").contains("predicted_s_per_sample"));
    for (const char* p : {"fbs", "greedy"})
      if (rows.at(p).contains("predicted_s_per_sample"))
        CHECK(rows.at("vbs")["predicted_s_per_sample"].get<double>() <=
              rows.at(p)["predicted_s_per_sample"].get<double>() * (1 + 1e-9));
  }
  CHECK(contains(run_frugal("help bench-vbs").output,
                 "alexnet,vgg16_bn,googlenet,resnet50,squeezenet1_1,mobilenet_v2,resnet18"));
}

// --time-layer reaches the CPU executor that profiles (docs/COSTS.md): the
// inputs-flushed mode runs, and a mode that does not exist is named.
TEST_CASE("frugal bench-vbs --time-layer: passed to the profiling executor, checked", "[workflow]") {
  ScratchDir dir("benchvbs_tl");
  FrugalRun r = frugal_in(dir,
                          "bench-vbs --nets toy_linear --batch 2 --budgets 1 --repeat 1 --threads 1 --quiet "
                          "--no-cache --time-layer cold_inputs --json b.json");
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK(read_json(dir / "b.json")["rows"].size() == 3);
  r = frugal_in(dir, "bench-vbs --nets toy_linear --batch 2 --budgets 1 --quiet --time-layer hot");
  CHECK(r.code != 0);
  CHECK(contains(r.output, "'time_layer'"));
  CHECK(contains(r.output, "hot"));
}

// --stat picks which round is a plan's measured time: the fastest (default) or
// the median; both are in the JSON, and the kept one is the measured time.
TEST_CASE("frugal bench-vbs --stat: fastest or median round, both recorded", "[workflow]") {
  ScratchDir dir("benchvbs_stat");
  for (const char* stat : {"fastest", "median"}) {
    INFO(stat);
    FrugalRun r =
        frugal_in(dir, std::string("bench-vbs --nets toy_linear --batch 2 --budgets 1 --repeat 3 ") +
                           "--threads 1 --quiet --stat " + stat + " --json b.json");
    INFO(r.output);
    REQUIRE(r.code == 0);
    CHECK(contains(r.output, std::string("the ") + stat + " round kept"));
    const nlohmann::json b = read_json(dir / "b.json");
    REQUIRE(b["rows"].size() == 3);
    for (const auto& row : b["rows"]) {
      if (!row.contains("measured_s_per_sample")) continue;
      const double fastest = row["fastest_s_per_sample"], median = row["median_s_per_sample"];
      CHECK(fastest <= median);
      CHECK(row["measured_s_per_sample"].get<double>() ==
            (std::string(stat) == "fastest" ? fastest : median));
    }
  }
  FrugalRun r = frugal_in(dir, "bench-vbs --nets toy_linear --batch 2 --budgets 1 --quiet --stat mean");
  CHECK(r.code != 0);
  CHECK(contains(r.output, "--stat"));
  CHECK(contains(r.output, "mean"));
}
