// Issue 5, item 4 on every zoo network: the planners' plans, run by the cpu
// executor in an arena of exactly the budget, reach exactly the peak the plan
// predicts, never more than the budget, and give the outputs of an ordinary
// whole-batch run. Several budgets per network: the smallest any vbs plan
// needs, the whole-batch peak, and one between (geometric mean), where plans
// split the batch differently per layer.
//
// The cost table's bytes come from the executor (layer_bytes), as the profiler
// takes them; its times are synthetic (proportional to the layer's MACs, with a
// per-call overhead that rewards larger batches), so the test needs no timing
// and the planners have a real trade-off to make. Peaks do not depend on times.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <nlohmann/json.hpp>
#include <random>

#include "loader/executor_client.h"
#include "loader/planner_client.h"
#include "loader/plugin_registry.h"
#include "profiler/profiler.h"
#include "reduced_run.h"
#include "zoo/zoo.h"

using nlohmann::json;

namespace {

const int kBatch = 3;  // the request; small, as every plan runs the full network

json synthetic_costs(frugal::ExecutorClient& ex, const std::string& model) {
  const json& d = ex.describe();
  json layers = json::array();
  for (size_t i = 0; i < d["layers"].size(); ++i) {
    const json& L = d["layers"][i];
    const double macs = L.value("macs_per_sample", 0.0);
    json time = json::array(), in = json::array(), out = json::array(), ws = json::array();
    for (int b = 1; b <= kBatch; ++b) {
      const frugal::LayerBytes lb = ex.layer_bytes(int(i), b);
      // Per-sample seconds: 1 ns per 100 MACs, plus 50 us per call shared by the batch.
      time.push_back(macs * 1e-11 + 5e-5 / b);
      in.push_back(lb.in_bytes);
      out.push_back(lb.out_bytes);
      ws.push_back(lb.ws_bytes);
    }
    layers.push_back({{"name", L["name"]},
                      {"inputs", L["inputs"]},
                      {"time_s", time},
                      {"in_bytes", in},
                      {"out_bytes", out},
                      {"ws_bytes", ws}});
  }
  return {{"model", model}, {"executor", "cpu"}, {"batch_max", kBatch}, {"layers", layers}};
}

frugal::Tensor random_input(const json& d, uint64_t seed) {
  std::vector<int64_t> dims = d["inputs"][0]["shape"].get<std::vector<int64_t>>();
  dims[0] = kBatch;
  frugal::Tensor t(dims);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (float& x : t.data) x = u(rng);
  return t;
}

// max |a - b| over max(1, max |a|): the outputs are logits of magnitude ~1-100.
double relative_difference(const frugal::Tensor& a, const frugal::Tensor& b) {
  REQUIRE(a.dims == b.dims);
  double scale = 1, diff = 0;
  for (size_t i = 0; i < a.data.size(); ++i) {
    scale = std::max(scale, double(std::fabs(a.data[i])));
    diff = std::max(diff, double(std::fabs(a.data[i] - b.data[i])));
  }
  return diff / scale;
}

// True when some layer runs on fewer samples than the request in this plan.
bool splits_batch(const json& plan) {
  for (const json& s : plan["steps"])
    if (s["count"].get<int>() < kBatch) return true;
  return false;
}

}  // namespace

TEST_CASE("plans on every zoo network: measured peak equals the plan's, outputs equal the whole-batch run",
          "[workflow][plans][slow]") {
  frugal::PluginRegistry reg;
  reg.scan_dirs({std::string(FRUGAL_TEST_BINARY_DIR) + "/plugins"});
  const frugal::LoadedPlugin& cpu = reg.require(FRUGAL_KIND_EXECUTOR, "cpu");
  int split_plans = 0, plans_run = 0;

  int networks = 0;
  for (const std::string& name : frugal::zoo_names()) {
    if (frugal_test::left_out_when_reduced(name)) continue;
    ++networks;
    INFO("network " << name);
    frugal::ExecutorClient ex(cpu, frugal::build_zoo_model(name, 5), json{{"threads", 2}});
    const json costs = synthetic_costs(ex, name);
    const std::vector<frugal::Tensor> in = {random_input(ex.describe(), 17)};

    // The whole batch at a budget with room to spare gives the reference
    // outputs and the whole-batch peak.
    ex.set_budget(uint64_t(1) << 32);
    std::vector<frugal::Tensor> whole;
    const json whole_report = ex.run(json(), in, whole);
    const uint64_t whole_peak = whole_report.at("peak_bytes").get<uint64_t>();

    const json probe = frugal::make_plan(reg.require(FRUGAL_KIND_PLANNER, "vbs"), costs,
                                         {{"budget_bytes", whole_peak}, {"batch", kBatch}});
    const uint64_t min_budget = probe.at("min_budget_bytes").get<uint64_t>();
    REQUIRE(min_budget <= whole_peak);
    const uint64_t mid_budget = uint64_t(std::sqrt(double(min_budget) * double(whole_peak)));

    for (uint64_t budget : {min_budget, mid_budget, whole_peak}) {
      for (const char* planner : {"vbs", "fbs", "greedy"}) {
        INFO("planner " << planner << ", budget " << budget << " (min " << min_budget << ", whole batch "
                        << whole_peak << ")");
        json plan;
        try {
          plan = frugal::make_plan(reg.require(FRUGAL_KIND_PLANNER, planner), costs,
                                   {{"budget_bytes", budget}, {"batch", kBatch}});
        } catch (const std::exception& e) {
          // Only the baselines may find nothing at the smallest budgets.
          CHECK(std::string(planner) != "vbs");
          continue;
        }
        const uint64_t predicted = plan.at("peak_bytes").get<uint64_t>();
        CHECK(predicted <= budget);
        ex.set_budget(budget);  // the arena is exactly the budget
        std::vector<frugal::Tensor> out;
        const json report = ex.run(plan, in, out);
        CHECK(report.at("peak_bytes").get<uint64_t>() == predicted);
        REQUIRE(out.size() == whole.size());
        for (size_t k = 0; k < out.size(); ++k) CHECK(relative_difference(whole[k], out[k]) <= 1e-5);
        ++plans_run;
        if (splits_batch(plan)) ++split_plans;
      }
    }
  }
  // The sweep exercises real schedules, not just whole-batch runs.
  CHECK(plans_run >= 3 * networks);
  CHECK(split_plans >= networks);
}

TEST_CASE("a network output that a later layer also reads: the profiled table keeps it, peaks agree",
          "[workflow][plans]") {
  // toy_linear with block2's output as a second network output, read by block3:
  // the executor keeps it to the end; the profiler marks the layer
  // "network_output", so the planner counts it to the end too.
  frugal::Graph g = frugal::build_zoo_model("toy_linear", 3);
  g.outputs.push_back("block2.relu");
  frugal::PluginRegistry reg;
  reg.scan_dirs({std::string(FRUGAL_TEST_BINARY_DIR) + "/plugins"});
  frugal::ExecutorClient ex(reg.require(FRUGAL_KIND_EXECUTOR, "cpu"), g, json{{"threads", 1}});
  frugal::ProfileOptions opt;
  opt.batch_max = kBatch;
  opt.repeats = 1;
  opt.reuse_cache = opt.write_cache = false;
  const json costs = frugal::profile_costs(ex, {"cpu", "toy_linear+block2", "test"}, opt).costs;
  int marked = 0;
  for (const json& L : costs["layers"])
    if (L.value("network_output", false)) {
      ++marked;
      CHECK((L["name"] == "block2.conv" || L["name"] == "fc"));
    }
  CHECK(marked == 2);

  const std::vector<frugal::Tensor> in = {random_input(ex.describe(), 5)};
  ex.set_budget(uint64_t(1) << 30);
  std::vector<frugal::Tensor> whole;
  ex.run(json(), in, whole);
  REQUIRE(whole.size() == 2);
  const json probe = frugal::make_plan(reg.require(FRUGAL_KIND_PLANNER, "vbs"), costs,
                                       {{"budget_bytes", uint64_t(1) << 30}, {"batch", kBatch}});
  const uint64_t min_budget = probe.at("min_budget_bytes").get<uint64_t>();
  for (uint64_t budget : {min_budget, min_budget + min_budget / 2, uint64_t(1) << 30}) {
    INFO("budget " << budget);
    const json plan = frugal::make_plan(reg.require(FRUGAL_KIND_PLANNER, "vbs"), costs,
                                        {{"budget_bytes", budget}, {"batch", kBatch}});
    ex.set_budget(budget);
    std::vector<frugal::Tensor> out;
    CHECK(ex.run(plan, in, out).at("peak_bytes").get<uint64_t>() == plan.at("peak_bytes").get<uint64_t>());
    REQUIRE(out.size() == 2);
    for (size_t k = 0; k < 2; ++k) CHECK(relative_difference(whole[k], out[k]) <= 1e-5);
  }
}
