// The three planners behind the plugins (vbs, fbs, greedy): options parsing,
// choosing among candidate plans, and the plan JSON of docs/PLAN.md.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cost_table.h"
#include "frugal/error.h"

namespace frugal::planner {

// The budget cannot hold any plan; the message says the smallest one that works.
struct BudgetError : Error {
  using Error::Error;
};

struct PlanOptions {
  uint64_t budget_bytes = 0;
  int batch = 0;                                               // r: samples in the request
  uint64_t unit_bytes = 0;                                     // 0: budget / 256, rounded up
  double latency_s = std::numeric_limits<double>::infinity();  // per top-level phase
  bool table = false;  // also plans for every budget in units up to budget_bytes
  // vbs candidates (docs/PLANNER.md): the extended DP on the table's order, on a
  // memory-friendly reordering and on the collapsed branches; the paper's DP; the
  // baselines; the minimum-peak plan.
  std::vector<std::string> methods{"extended", "reordered", "branches", "paper", "greedy", "fbs", "minpeak"};
  uint64_t max_table_bytes = uint64_t{1} << 30;  // cap on the DP tables; the default unit grows to fit
  // Seconds per request the caller adds to a method's plan beyond the table
  // (the arena moves its steps cause, priced by the host from the executor's
  // placement: docs/COSTS.md, "Moves"); they enter the choice among candidates
  // and every time reported. Not applied to the table mode's other budgets.
  std::map<std::string, double> extra_time_s;
  bool candidate_steps = false;  // every candidate's steps in "candidates" (for the host to place them)
  // A candidate other than the better of fbs and greedy is taken only
  // when it is predicted at least this fraction faster (docs/PLANNER.md,
  // "Minimum gain"): below it, the gain is inside the time model's error.
  double min_gain = 0;
};

PlanOptions parse_plan_options(const nlohmann::json& j, const std::string& planner);

nlohmann::json plan_vbs(const CostTable& costs, const PlanOptions& opt);
nlohmann::json plan_fbs(const CostTable& costs, const PlanOptions& opt);
nlohmann::json plan_greedy(const CostTable& costs, const PlanOptions& opt);

// planner: "vbs", "fbs" or "greedy". Parses both JSON texts (errors name them).
nlohmann::json run_planner(const std::string& planner, const std::string& costs_json,
                           const std::string& options_json);

}  // namespace frugal::planner
