// Calls a planner plugin: cost table and options in, plan out (all JSON; the
// formats are in docs/COSTS.md and docs/PLAN.md).
#pragma once

#include <nlohmann/json.hpp>

#include "loader/executor_client.h"
#include "loader/plugin_registry.h"

namespace frugal {

// options: {"budget_bytes":N,"batch":B,...}. Throws Error naming the plugin when
// it fails or returns an empty / non-JSON / non-object plan.
nlohmann::json make_plan(const LoadedPlugin& planner, const nlohmann::json& costs,
                         const nlohmann::json& options);

// make_plan with the arena moves priced (docs/COSTS.md, "Moves"): every
// candidate the planner considers is placed by `executor` (its placement
// extension) in exactly the budget, its moved bytes priced at the table's
// move price for an arena of that budget (profiler/move_price.h), and the planner chooses again with those
// seconds added (its "extra_time_s" option). The plan gets "moves": {"priced": true, "moved_bytes",
// "seconds", "move_s_per_byte", "by_method": {method: bytes}}. Without a price in the table, or an executor
// that cannot place, or a planner that refuses the options, it is make_plan's plan with "moves": {"priced":
// false, "why"} (and its moved bytes when the executor can place it).
nlohmann::json make_plan_pricing_moves(const LoadedPlugin& planner, const nlohmann::json& costs,
                                       const nlohmann::json& options, const ExecutorClient& executor);

}  // namespace frugal
