// VBS against an exhaustive search over ALL layer-by-layer schedules on many
// small random instances (fixed seed): never worse than FBS or Greedy, never
// over budget (by the plan checker and by an independent count-based model), a
// plan whenever one exists, and the optimum on the vast majority.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "planner_test_util.h"
#include "planners.h"

using namespace frugal::planner;
using nlohmann::json;

namespace {

struct Stats {
  int instances = 0, feasible = 0, optimal = 0, paper_optimal = 0, paper_missed = 0, paper_behind_greedy = 0;
  int extended_optimal = 0, branches_optimal = 0, reordered_optimal = 0, min_budget_exact = 0,
      refused_feasible = 0;
  double worst_gap = 0;  // (vbs - optimum) / optimum
  void print(const char* what) const {
    std::printf(
        "%s: %d instances, %d with a plan; vbs optimal on %d (%.1f%%), worst gap %.2f%%; extended DP alone "
        "optimal on %d, reordered on %d, branches on %d; paper DP alone optimal on %d, finds no plan on %d, "
        "behind greedy on %d; min budget "
        "exact on %d/%d; refused although a schedule exists: %d\n",
        what, instances, feasible, optimal, 100.0 * optimal / std::max(1, feasible), 100.0 * worst_gap,
        extended_optimal, reordered_optimal, branches_optimal, paper_optimal, paper_missed,
        paper_behind_greedy, min_budget_exact, instances, refused_feasible);
  }
};

bool same_time(double a, double b) { return std::abs(a - b) <= 1e-5 * std::max(1.0, std::abs(b)); }

double method_time(const json& plan, const std::string& m) {
  for (const json& c : plan["candidates"])
    if (c["method"] == m && c.contains("time_per_sample_s")) return c["time_per_sample_s"].get<double>();
  return INFINITY;
}

// The step overheads of a table built by make_table_json, read from its JSON.
std::vector<double> step_overheads(const json& table) {
  std::vector<double> v;
  for (const json& l : table["layers"]) v.push_back(l.value("step_overhead_s", 0.0));
  return v;
}

// Total seconds of a plan's steps, from the table's JSON with the test's own
// arithmetic: count x time_s[count-1] + step_overhead_s per step.
double plan_seconds(const json& table, const json& plan) {
  double total = 0;
  for (const json& s : plan["steps"])
    for (const json& l : table["layers"])
      if (l["name"] == s["layer"]) {
        const int n = s["count"].get<int>();
        total += n * l["time_s"][n - 1].get<double>() + l.value("step_overhead_s", 0.0);
      }
  return total;
}

// One instance: plan with every candidate recorded, compare with the search.
void run_instance(const json& table, int r, uint64_t budget, Stats& st) {
  const CostTable costs = parse_cost_table(table);
  const test::BruteForce bf = test::brute_force(costs, r, budget, step_overheads(table));
  st.instances++;
  json opts = {{"budget_bytes", budget}, {"batch", r}, {"unit_bytes", 1}};
  json plan;
  try {
    plan = run_planner("vbs", table.dump(), opts.dump());
  } catch (const BudgetError& e) {
    // Refused only when no schedule at all fits: each test case asserts on the
    // count of refusals although a schedule exists.
    if (bf.feasible) {
      st.refused_feasible++;
      UNSCOPED_INFO("refused although a schedule exists: " << e.what() << "\n" << table.dump());
    }
    // The message names the smallest budget that works.
    if (std::string(e.what()).find("needs at least " + std::to_string(bf.min_peak) + " bytes") !=
        std::string::npos)
      st.min_budget_exact++;
    return;
  }
  INFO(table.dump() << "\nbatch " << r << " budget " << budget);
  REQUIRE(bf.feasible);  // a plan implies a schedule exists
  st.feasible++;
  if (plan["min_budget_bytes"].get<uint64_t>() == bf.min_peak) st.min_budget_exact++;
  CHECK(plan["min_budget_bytes"].get<uint64_t>() >= bf.min_peak);

  for (const json& c : plan["candidates"])  // no DP ever hands out a plan over budget
    CHECK(c.value("error", "").find("internal error") == std::string::npos);
  // Peak and time by the checker, and the peak again by the independent model.
  const std::vector<Step> steps = steps_from_json(costs, plan);
  const PlanCheck chk = check_plan_within(costs, r, steps, budget);
  CHECK(test::count_model_peak(costs, r, steps) == chk.peak_bytes);
  CHECK(chk.peak_bytes == plan["peak_bytes"].get<uint64_t>());
  const double vbs = chk.time_per_sample_s, opt = bf.best_total_s / r;
  // The plan's time is what its steps cost, overheads included.
  CHECK(same_time(plan["time_per_sample_s"].get<double>() * r, plan_seconds(table, plan)));
  CHECK(same_time(vbs * r, plan_seconds(table, plan)));
  CHECK(vbs >= opt * (1 - 1e-6));  // nothing beats the exhaustive optimum
  CHECK(vbs <= method_time(plan, "fbs") * (1 + 1e-9));
  CHECK(vbs <= method_time(plan, "greedy") * (1 + 1e-9));
  if (same_time(vbs, opt)) st.optimal++;
  if ((vbs - opt) / opt > 1e-5 && std::getenv("PLANNER_DUMP_WORST"))
    std::printf("gap %.4f: batch %d budget %llu %s\nplan %s\n", (vbs - opt) / opt, r,
                (unsigned long long)budget, table.dump().c_str(), plan["steps"].dump().c_str());
  st.worst_gap = std::max(st.worst_gap, (vbs - opt) / opt);
  if (same_time(method_time(plan, "extended"), opt)) st.extended_optimal++;
  if (same_time(method_time(plan, "branches"), opt)) st.branches_optimal++;
  if (same_time(method_time(plan, "reordered"), opt)) st.reordered_optimal++;
  const double paper = method_time(plan, "paper");
  if (std::isinf(paper)) st.paper_missed++;
  if (same_time(paper, opt)) st.paper_optimal++;
  if (paper > method_time(plan, "greedy") * (1 + 1e-6)) st.paper_behind_greedy++;
}

// Budgets between the smallest feasible one and the whole-batch need, plus a few
// just below the smallest (they must be refused).
uint64_t pick_budget(std::mt19937_64& rng, const CostTable& costs, int r) {
  const uint64_t lo = test::brute_force(costs, r, 0).min_peak;
  std::uniform_real_distribution<double> u(0.0, 1.0);
  if (u(rng) < 0.04) return lo - 1;
  return lo + static_cast<uint64_t>(u(rng) * u(rng) * 1.5 * lo);
}

}  // namespace

TEST_CASE("vbs vs exhaustive search: small random linear chains", "[planner][brute]") {
  std::mt19937_64 rng(20240601);
  Stats st;
  for (int it = 0; it < 1200; ++it) {
    const int n = std::uniform_int_distribution<int>(2, 5)(rng);
    const int bmax = std::uniform_int_distribution<int>(1, 4)(rng);
    const int r = std::uniform_int_distribution<int>(1, n <= 3 ? 6 : 5)(rng);
    uint64_t in_ps = 0;
    const auto layers = test::random_linear(rng, n, bmax, in_ps);
    const json table = test::make_table_json(layers, in_ps, bmax);
    const CostTable costs = parse_cost_table(table);
    run_instance(table, r, pick_budget(rng, costs, r), st);
  }
  st.print("linear");
  // Every instance with a plan got one from vbs (checked per instance above).
  // Measured on this fixed seed: 99.4% optimal, worst gap 1.5% (docs/PLANNER.md).
  // The thresholds sit just below, so that losing a recurrence or a candidate
  // (the paper's DP alone: 82%) fails while a change of ties does not.
  CHECK(st.optimal >= 0.985 * st.feasible);
  CHECK(st.worst_gap < 0.03);
  CHECK(st.min_budget_exact == st.instances);
  CHECK(st.refused_feasible == 0);
}

TEST_CASE("vbs vs exhaustive search: small random branched graphs", "[planner][brute]") {
  std::mt19937_64 rng(77);
  Stats st;
  for (int it = 0; it < 600; ++it) {
    const int bmax = std::uniform_int_distribution<int>(1, 3)(rng);
    const int r = std::uniform_int_distribution<int>(1, 3)(rng);
    uint64_t in_ps = 0;
    const auto layers = test::random_branched(rng, bmax, in_ps);
    const json table = test::make_table_json(layers, in_ps, bmax);
    const CostTable costs = parse_cost_table(table);
    run_instance(table, r, pick_budget(rng, costs, r), st);
  }
  st.print("branched");
  // Measured: 93.5% optimal, worst gap 15% (schedules where samples take the
  // branches in different orders, docs/PLANNER.md); the paper's DP alone: 60%.
  CHECK(st.optimal >= 0.92 * st.feasible);
  CHECK(st.worst_gap < 0.20);
  CHECK(st.refused_feasible == 0);
}

TEST_CASE("vbs with the default unit (budget/256) never exceeds the budget", "[planner][brute]") {
  std::mt19937_64 rng(5);
  int planned = 0, optimal = 0;
  for (int it = 0; it < 300; ++it) {
    const int n = std::uniform_int_distribution<int>(2, 5)(rng);
    const int bmax = std::uniform_int_distribution<int>(1, 4)(rng);
    const int r = std::uniform_int_distribution<int>(1, 5)(rng);
    uint64_t in_ps = 0;
    auto layers = test::random_linear(rng, n, bmax, in_ps);
    for (auto& l : layers) {  // realistic sizes: megabytes, so units are coarse
      l.out_per_sample *= 100003;
      for (auto& w : l.ws) w *= 99991;
    }
    in_ps *= 100003;
    const json table = test::make_table_json(layers, in_ps, bmax);
    const CostTable costs = parse_cost_table(table);
    const uint64_t budget = pick_budget(rng, costs, r);
    const test::BruteForce bf = test::brute_force(costs, r, budget);
    json plan;
    try {
      plan = run_planner("vbs", table.dump(), json{{"budget_bytes", budget}, {"batch", r}}.dump());
    } catch (const BudgetError&) {
      CHECK_FALSE(bf.feasible);
      continue;
    }
    INFO(table.dump() << "\nbatch " << r << " budget " << budget);
    REQUIRE(bf.feasible);
    ++planned;
    CHECK(plan["memory_unit_bytes"].get<uint64_t>() == (budget + 255) / 256);
    const PlanCheck chk = check_plan_within(costs, r, steps_from_json(costs, plan), budget);
    if (same_time(chk.time_per_sample_s, bf.best_total_s / r)) ++optimal;
  }
  std::printf("default unit: %d plans, %d optimal (%.1f%%)\n", planned, optimal,
              100.0 * optimal / std::max(1, planned));
  // Measured 96.2%: coarse units cost a little optimality, never feasibility.
  CHECK(optimal >= 0.94 * planned);
}

// Step overheads (docs/COSTS.md, step_overhead_s): every step of a layer costs a
// fixed number of seconds on top of count x time_s, so splitting a layer's
// samples into more steps must gain more than the steps cost. A planner that
// ignores the term, or prices it in the checker but not in its recurrences,
// fails here: its plans are then priced below the exhaustive optimum, or miss it.
void add_random_overheads(std::mt19937_64& rng, std::vector<test::LayerSpec>& layers) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  for (auto& l : layers) l.step_s = u(rng) < 0.2 ? 0.0 : 8.0 * u(rng);  // time_s is 0.2-10 per sample
}

// A random chain of 2-5 layers (batch sizes up to 1-4) with random step
// overheads, as a cost table, and a request of r samples: 1..r_max, or
// 1..r_max_short on chains of at most 3 layers.
struct OverheadInstance {
  int r = 1;
  json table;
};
OverheadInstance random_overhead_instance(std::mt19937_64& rng, int r_max, int r_max_short) {
  const int n = std::uniform_int_distribution<int>(2, 5)(rng);
  const int bmax = std::uniform_int_distribution<int>(1, 4)(rng);
  const int r = std::uniform_int_distribution<int>(1, n <= 3 ? r_max_short : r_max)(rng);
  uint64_t in_ps = 0;
  auto layers = test::random_linear(rng, n, bmax, in_ps);
  add_random_overheads(rng, layers);
  return {r, test::make_table_json(layers, in_ps, bmax)};
}

TEST_CASE("vbs vs exhaustive search with step overheads: linear chains", "[planner][brute]") {
  std::mt19937_64 rng(31337);
  Stats st;
  int overhead_decides = 0;  // instances where the optimum with overheads is not one without them
  for (int it = 0; it < 800; ++it) {
    const auto [r, table] = random_overhead_instance(rng, 5, 6);
    const CostTable costs = parse_cost_table(table);
    const uint64_t budget = pick_budget(rng, costs, r);
    run_instance(table, r, budget, st);
    // Does the overhead change the answer? Plan the same instance without it and
    // price that plan with the overheads.
    json bare = table;
    for (json& l : bare["layers"]) l.erase("step_overhead_s");
    try {
      const json p0 = run_planner("vbs", bare.dump(),
                                  json{{"budget_bytes", budget}, {"batch", r}, {"unit_bytes", 1}}.dump());
      const json p1 = run_planner("vbs", table.dump(),
                                  json{{"budget_bytes", budget}, {"batch", r}, {"unit_bytes", 1}}.dump());
      if (plan_seconds(table, p0) > plan_seconds(table, p1) * (1 + 1e-6)) overhead_decides++;
    } catch (const BudgetError&) {
    }
  }
  st.print("linear, step overheads");
  // Measured: 98.8% optimal, worst gap 2.8%, 53 decided by the overhead (a DP
  // whose leaves leave the overhead out: 96.1%, 9.0%, 34).
  std::printf("linear, step overheads: on %d instances the plan made without them costs more\n",
              overhead_decides);
  CHECK(overhead_decides >= 40);  // the term matters on these instances (measured: 53)
  CHECK(st.optimal >= 0.985 * st.feasible);
  CHECK(st.worst_gap < 0.03);
  CHECK(st.min_budget_exact == st.instances);
  CHECK(st.refused_feasible == 0);
}

TEST_CASE("vbs vs exhaustive search with step overheads: branched graphs", "[planner][brute]") {
  std::mt19937_64 rng(4242);
  Stats st;
  for (int it = 0; it < 400; ++it) {
    const int bmax = std::uniform_int_distribution<int>(1, 3)(rng);
    const int r = std::uniform_int_distribution<int>(1, 3)(rng);
    uint64_t in_ps = 0;
    auto layers = test::random_branched(rng, bmax, in_ps);
    add_random_overheads(rng, layers);
    const json table = test::make_table_json(layers, in_ps, bmax);
    const CostTable costs = parse_cost_table(table);
    run_instance(table, r, pick_budget(rng, costs, r), st);
  }
  st.print("branched, step overheads");
  // Measured: 97.8% (94.3% when the DP leaves leave the overhead out).
  CHECK(st.optimal >= 0.96 * st.feasible);
  CHECK(st.worst_gap < 0.20);
  // The smallest-peak DP is not exact on a few branched instances (docs/PLANNER.md,
  // "Measured"): a budget between the exhaustive minimum and its figure is
  // refused. That is memory alone, the overheads play no part in it.
  CHECK(st.refused_feasible <= st.instances - st.min_budget_exact);
}

// Plans request `req` from two tables that must agree on feasibility: false
// (both refused, checked) or true with a from `first` and b from `second`.
static bool plan_both(const char* planner, const json& first, const json& second, const json& req, json& a,
                      json& b) {
  try {
    a = run_planner(planner, first.dump(), req.dump());
  } catch (const BudgetError&) {
    CHECK_THROWS_AS(run_planner(planner, second.dump(), req.dump()), BudgetError);
    return false;
  }
  b = run_planner(planner, second.dump(), req.dump());
  return true;
}

// A per-sample step overhead (docs/COSTS.md, step_overhead_per_sample_s) is a
// constant added to the layer's per-sample time at every batch size: every
// planner must price a table carrying it exactly as the table with the constant
// folded into time_s by this test's own arithmetic (the same best price; ties
// may order steps differently), so the exhaustive comparisons above cover it.
// Every schedule runs each layer once on every sample, so the term adds the
// same r x sum(p_k) to all of them: it moves the prediction, never the choice.
TEST_CASE("a per-sample step overhead plans as time_s plus that constant", "[planner][brute]") {
  std::mt19937_64 rng(4242);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  int planned = 0;
  for (int it = 0; it < 300; ++it) {
    auto [r, with] = random_overhead_instance(rng, 5, 5);
    json folded = with, bare = with;
    for (size_t k = 0; k < with["layers"].size(); ++k) {
      const double p = u(rng) < 0.3 ? 0.0 : 5.0 * u(rng);
      with["layers"][k]["step_overhead_per_sample_s"] = p;
      for (json& t : folded["layers"][k]["time_s"]) t = t.get<double>() + p;
    }
    const uint64_t budget = pick_budget(rng, parse_cost_table(with), r);
    for (const char* planner : {"vbs", "fbs", "greedy"}) {
      const json req = {{"budget_bytes", budget}, {"batch", r}, {"unit_bytes", 1}};
      json a, b;
      if (!plan_both(planner, with, folded, req, a, b)) continue;
      ++planned;
      CHECK(same_time(a["time_per_sample_s"].get<double>(), b["time_per_sample_s"].get<double>()));
      CHECK(same_time(plan_seconds(folded, a) / r, a["time_per_sample_s"].get<double>()));
      // The plan made without the term, priced with it: just as good.
      const double without = plan_seconds(folded, run_planner(planner, bare.dump(), req.dump()));
      CHECK(same_time(without, plan_seconds(folded, a)));
    }
  }
  CHECK(planned >= 300);
}

// A run's overhead beyond its steps (docs/COSTS.md, run_overhead_s and
// run_overhead_per_sample_s) is added once to every plan of a request: each
// planner's plan is the one it makes without the term, priced by this test's
// own arithmetic plus fixed + r x per-sample.
TEST_CASE("a run overhead adds the same to every plan and changes no choice", "[planner][brute]") {
  std::mt19937_64 rng(4343);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  int planned = 0;
  for (int it = 0; it < 200; ++it) {
    const auto [r, bare] = random_overhead_instance(rng, 5, 5);
    json with = bare;
    const double fixed = 10.0 * u(rng), per_sample = 3.0 * u(rng);
    with["run_overhead_s"] = fixed;
    with["run_overhead_per_sample_s"] = per_sample;
    const uint64_t budget = pick_budget(rng, parse_cost_table(with), r);
    for (const char* planner : {"vbs", "fbs", "greedy"}) {
      const json req = {{"budget_bytes", budget}, {"batch", r}, {"unit_bytes", 1}};
      json a, b;
      if (!plan_both(planner, with, bare, req, a, b)) continue;
      ++planned;
      CHECK(same_time(plan_seconds(bare, a), plan_seconds(bare, b)));  // no other choice
      CHECK(same_time(a["time_per_sample_s"].get<double>() * r,
                      plan_seconds(bare, b) + fixed + per_sample * r));
    }
  }
  CHECK(planned >= 200);
}
