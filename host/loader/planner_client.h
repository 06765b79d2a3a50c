// Calls a planner plugin: cost table and options in, plan out (all JSON; the
// formats are in docs/COSTS.md and docs/PLAN.md).
#pragma once

#include <nlohmann/json.hpp>

#include "loader/plugin_registry.h"

namespace frugal {

// options: {"budget_bytes":N,"batch":B,...}. Throws Error naming the plugin when
// it fails or returns an empty / non-JSON / non-object plan.
nlohmann::json make_plan(const LoadedPlugin& planner, const nlohmann::json& costs,
                         const nlohmann::json& options);

}  // namespace frugal
