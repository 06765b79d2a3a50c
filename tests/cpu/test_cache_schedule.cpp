// The cpu executor's run without a plan (option "schedule"): "cache" runs the
// first layers in chunks of samples whose steps fit in "cache_bytes" and the
// rest on the whole batch (exec::cache_blocked_plan); "whole" runs every layer
// on the whole batch. Checked against a restatement of the rule, the test
// suite's own memory model, the placement extension and the float64 reference.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "cpu_plugin.h"
#include "graph_helpers.h"
#include "reference.h"
#include "zoo/zoo.h"

using cpu_test::HostTensor;
using cpu_test::MemoryModel;
using cpu_test::Step;

namespace {

// The rule of plan.h's cache_blocked_plan, restated for networks whose weights
// are small next to their activations (the toys): per-sample in + out bytes of
// each layer against the limit, the prefix up to the last layer over it.
std::vector<Step> expected_steps(cpu_test::Executor& ex, size_t layers, int64_t batch, uint64_t cache_bytes) {
  int prefix = 0;
  int64_t chunk = batch;
  for (size_t l = 0; l < layers; ++l) {
    const frugal_layer_bytes b = ex.layer_bytes(int(l), 1);
    const int64_t fits = std::max<int64_t>(1, int64_t(cache_bytes / (b.in_bytes + b.out_bytes)));
    if (fits < batch) {
      prefix = int(l) + 1;
      chunk = std::min(chunk, fits);
    }
  }
  std::vector<Step> steps;
  for (int64_t first = 0; prefix > 0 && first < batch; first += chunk)
    for (int l = 0; l < prefix; ++l) steps.push_back({l, first, std::min(chunk, batch - first)});
  for (int l = prefix; l < int(layers); ++l) steps.push_back({l, 0, batch});
  return steps;
}

// Largest |got - want| relative to the reference's own tolerance (1: at the limit).
double worst_error(const HostTensor& got, const frugal::RefTensor& want) {
  double worst = 0;
  for (size_t i = 0; i < want.data.size(); ++i)
    worst = std::max(worst,
                     std::fabs(double(got.data[i]) - want.data[i]) / (1e-4 + 1e-3 * std::fabs(want.data[i])));
  return worst;
}

std::string options(const std::string& schedule, uint64_t cache_bytes) {
  return "{\"threads\": 2, \"schedule\": \"" + schedule +
         "\", \"cache_bytes\": " + std::to_string(cache_bytes) + "}";
}

}  // namespace

TEST_CASE("without a plan the first layers run in cache-sized chunks, with the whole batch's outputs",
          "[cpu][plan]") {
  const frugal::Graph g = frugal::build_zoo_model("toy_branched", 5);
  cpu_test::Executor probe(g, "{\"threads\": 1}");
  REQUIRE(probe.ok());
  const size_t layers = probe.describe()["layers"].size();
  uint64_t largest = 0;  // the most in + out bytes of a layer on one sample
  for (size_t l = 0; l < layers; ++l) {
    const frugal_layer_bytes b = probe.layer_bytes(int(l), 1);
    largest = std::max<uint64_t>(largest, b.in_bytes + b.out_bytes);
  }
  const int64_t batch = 5;
  const std::vector<HostTensor> in = exec_test::random_inputs(probe.describe(), batch, 21);
  frugal::RefValues ref_in;
  ref_in[in[0].name] =
      frugal::RefTensor{in[0].dims, std::vector<double>(in[0].data.begin(), in[0].data.end())};
  const frugal::RefValues want = frugal::reference_run(g, ref_in);

  // Limits: two samples of the largest layer (chunks of 2, the largest layer and
  // those before it chunked), one sample (chunks of 1), and the whole batch (no chunks).
  for (const uint64_t cache_bytes : {2 * largest + largest / 2, largest, uint64_t(batch) * largest}) {
    INFO("cache_bytes " << cache_bytes);
    cpu_test::Executor ex(g, options("cache", cache_bytes));
    REQUIRE(ex.ok());
    CHECK(ex.describe()["schedule"] == "cache");
    CHECK(ex.describe()["cache_bytes"] == cache_bytes);
    const std::vector<Step> steps = expected_steps(ex, layers, batch, cache_bytes);
    if (cache_bytes == 2 * largest + largest / 2) CHECK(steps.front().count == 2);
    if (cache_bytes == largest) CHECK(steps.front().count == 1);
    if (cache_bytes == uint64_t(batch) * largest) CHECK(steps.size() == layers);

    std::vector<HostTensor> out;
    nlohmann::json report;
    REQUIRE(ex.run(in, out, nullptr, &report).ok());
    CHECK(worst_error(out[0], want.at(out[0].name)) <= 1.0);
    REQUIRE(report["steps"].size() == steps.size());
    for (size_t i = 0; i < steps.size(); ++i) {
      INFO("step " << i);
      CHECK(report["steps"][i]["layer"] == probe.describe()["layers"][size_t(steps[i].layer)]["name"]);
      CHECK(report["steps"][i]["first"] == steps[i].first);
      CHECK(report["steps"][i]["count"] == steps[i].count);
    }
    // Memory: the suite's own model of the plan; the arena grows past the peak
    // only to move fewer bytes, at most to twice the peak, and the placement
    // extension foresees the moves at that size.
    MemoryModel mm(ex);
    const uint64_t peak = mm.peak(steps, batch);
    CHECK(report["peak_bytes"] == peak);
    CHECK(report["predicted_peak_bytes"] == peak);
    CHECK(peak <= mm.peak(mm.whole_batch(batch), batch));
    const uint64_t arena = report["budget_bytes"].get<uint64_t>();
    CHECK(arena >= peak);
    CHECK(arena <= 2 * peak);
    nlohmann::json placed;
    REQUIRE(ex.place(exec_test::placement_extension("cpu"), nullptr, int32_t(batch), arena, &placed).ok());
    CHECK(placed["peak_bytes"] == peak);
    CHECK(placed["moved_bytes"] == report["moved_bytes"]);
    // The smallest such arena: every smaller size on the way up moves more.
    for (uint64_t smaller = peak; smaller < arena; smaller += peak / 16) {
      nlohmann::json at_smaller;
      REQUIRE(ex.place(exec_test::placement_extension("cpu"), nullptr, int32_t(batch), smaller, &at_smaller)
                  .ok());
      CHECK(at_smaller["moved_bytes"].get<uint64_t>() > report["moved_bytes"].get<uint64_t>());
    }
  }

  // "whole": every layer once on all samples, whatever the limit.
  cpu_test::Executor whole(g, options("whole", 1));
  REQUIRE(whole.ok());
  std::vector<HostTensor> out;
  nlohmann::json report;
  REQUIRE(whole.run(in, out, nullptr, &report).ok());
  CHECK(worst_error(out[0], want.at(out[0].name)) <= 1.0);
  REQUIRE(report["steps"].size() == layers);
  for (const auto& st : report["steps"]) CHECK(st["count"] == batch);
}

TEST_CASE("a layer whose weights would be read again for every chunk keeps the whole batch", "[cpu][plan]") {
  // conv 3 -> 8 (3x3, 32x32) + Relu, Flatten, Gemm 8192 -> 512 (16.8 MB of weights).
  // At batch 8 and a limit of 100 kB every layer is over it (in + out per sample:
  // 45, 64 and 34 kB); chunking the Gemm would read its weights 7 more times, so
  // only the conv and the Flatten run in chunks (of 1: the Flatten's 64 kB).
  cpu_test::GraphMaker gm;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<float> u(-0.1f, 0.1f);
  auto values = [&](size_t n) {
    std::vector<float> v(n);
    for (float& x : v) x = u(rng);
    return v;
  };
  gm.input("x", {1, 3, 32, 32}, true);
  gm.constant("W", {8, 3, 3, 3}, values(8 * 27));
  gm.node("Conv", {"x", "W"}, "c").set_attr_ints("pads", {1, 1, 1, 1});
  gm.node("Relu", {"c"}, "r");
  gm.node("Flatten", {"r"}, "f");
  gm.constant("G", {8192, 512}, values(8192 * 512));
  gm.node("Gemm", {"f", "G"}, "y");
  gm.output("y");
  const frugal::Graph& g = gm.graph();
  cpu_test::Executor ex(g, options("cache", 100000));
  INFO(ex.created.message);
  REQUIRE(ex.ok());
  const nlohmann::json layers = ex.describe()["layers"];
  REQUIRE(layers.size() == 3);
  const int64_t batch = 8;
  const std::vector<HostTensor> in = exec_test::random_inputs(ex.describe(), batch, 4);
  std::vector<HostTensor> out;
  nlohmann::json report;
  REQUIRE(ex.run(in, out, nullptr, &report).ok());
  // (conv, flatten) on sample 0, then on sample 1, ..., then the Gemm on all 8.
  REQUIRE(report["steps"].size() == 2 * batch + 1);
  for (int64_t s = 0; s < batch; ++s)
    for (int k = 0; k < 2; ++k) {
      const nlohmann::json& st = report["steps"][size_t(2 * s + k)];
      CHECK(st["layer"] == layers[size_t(k)]["name"]);
      CHECK(st["first"] == s);
      CHECK(st["count"] == 1);
    }
  CHECK(report["steps"][size_t(2 * batch)]["layer"] == layers[2]["name"]);
  CHECK(report["steps"][size_t(2 * batch)]["count"] == batch);
  frugal::RefValues ref_in;
  ref_in[in[0].name] =
      frugal::RefTensor{in[0].dims, std::vector<double>(in[0].data.begin(), in[0].data.end())};
  CHECK(worst_error(out[0], frugal::reference_run(g, ref_in).at(out[0].name)) <= 1.0);
}

TEST_CASE("schedule options out of range are refused by name", "[cpu][plan]") {
  const frugal::Graph g = frugal::build_zoo_model("toy_tiny", 1);
  for (const char* bad : {R"({"schedule": "fast"})", R"({"schedule": 1})", R"({"cache_bytes": 0})",
                          R"({"cache_bytes": "16MB"})", R"({"cache_bytes": -5})"}) {
    cpu_test::Executor ex(g, bad);
    INFO(bad);
    CHECK_FALSE(ex.ok());
    const std::string key =
        std::string(bad).find("schedule") != std::string::npos ? "schedule" : "cache_bytes";
    CHECK_THAT(ex.created.message, Catch::Contains("option '" + key + "'"));
  }
  cpu_test::Executor ex(g, "");
  REQUIRE(ex.ok());
  CHECK(ex.describe()["schedule"] == "cache");  // the default
  CHECK(ex.describe()["cache_bytes"].get<uint64_t>() > 0);
}
