// frugal bench-vbs on the Vulkan executor (issue: plans measured where the
// paper's gains came from, a GPU): the plans are profiled, planned and run on
// the Vulkan device, every measured peak is the plan's, the header names the
// device, and the validation layer stays silent.
#include <catch2/catch.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "run_frugal.h"
#include "vk_test_util.h"

TEST_CASE("vulkan bench-vbs: plans profiled and run on the device, peaks as predicted", "[vulkan][cli]") {
  VK_REQUIRE_DEVICE();
  const std::string json = scratch_file("bench_vbs_vulkan.json", "");
  const FrugalRun r = run_frugal(
      "bench-vbs --nets toy_linear --executor vulkan --device 0 --batch 4 --budgets 2 "
      "--repeat 1 --quiet --no-cache --json " +
      sh_quote(json));
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.output, Catch::Contains("vulkan executor, device 0"));
  CHECK_THAT(r.output, Catch::Contains("device      0: "));
  std::FILE* f = std::fopen(json.c_str(), "r");
  REQUIRE(f);
  const nlohmann::json b = nlohmann::json::parse(f);
  std::fclose(f);
  std::remove(json.c_str());
  REQUIRE(b["rows"].size() == 6);  // 2 budgets x vbs, fbs, greedy
  int measured = 0;
  for (const auto& row : b["rows"]) {
    INFO(row.dump());
    if (!row.contains("peak_bytes")) continue;  // no plan of this planner under this budget
    ++measured;
    CHECK(row["peak_bytes"] == row["predicted_peak_bytes"]);
    CHECK(row["peak_bytes"].get<long long>() <= row["budget_bytes"].get<long long>());
    CHECK(row["measured_s_per_sample"].get<double>() > 0);
  }
  CHECK(measured >= 3);
}

TEST_CASE("vulkan bench-vbs: an unknown executor or device is named in the error", "[vulkan][cli]") {
  VK_REQUIRE_DEVICE();
  FrugalRun r = run_frugal("bench-vbs --nets toy_linear --executor nope --batch 2 --budgets 1 --quiet");
  CHECK(r.code != 0);
  CHECK_THAT(r.output, Catch::Contains("no executor plugin named 'nope'"));
  r = run_frugal("bench-vbs --nets toy_linear --executor vulkan --device 99 --batch 2 --budgets 1 --quiet");
  CHECK(r.code != 0);
  CHECK_THAT(r.output, Catch::Contains("option \"device\" = 99: no such Vulkan device"));
}
