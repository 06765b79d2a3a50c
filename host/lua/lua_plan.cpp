#include "lua/lua_plan.h"

#include <cmath>

#include "frugal/error.h"
#include "loader/planner_client.h"
#include "loader/plugin_registry.h"
#include "lua/lua_binding.h"
#include "lua/lua_executor.h"
#include "lua/lua_json.h"
#include "lua/lua_options.h"
#include "lua/lua_records.h"
#include "profiler/cost_numbers.h"
#include "profiler/json_file.h"

namespace frugal {

namespace {

int l_plan(lua_State* L) {
  nlohmann::json costs;
  if (lua_type(L, 1) == LUA_TSTRING) {
    costs = read_json_file(lua_tostring(L, 1));
    check_cost_numbers(costs, lua_tostring(L, 1));
  } else if (lua_istable(L, 1)) {
    costs = lua_to_json(L, 1, "costs");
  } else {
    throw Error("argument #1 must be a cost table (frugal.profile) or a cost table file, got " +
                std::string(luaL_typename(L, 1)));
  }
  if (!lua_istable(L, 2)) throw Error("argument #2 must be an options table with at least budget and batch");
  check_option_names(
      L, 2, {"planner", "budget", "batch", "unit", "latency", "methods", "table", "executor", "min_gain"});
  const std::string planner = opt_string_field(L, 2, "planner", "vbs");

  nlohmann::json options = nlohmann::json::object();
  uint64_t bytes = 0;
  if (!opt_bytes_field(L, 2, "budget", &bytes))
    throw Error("option 'budget' is required (the memory for the plan, e.g. budget = \"20MB\")");
  if (bytes == 0) throw Error("option 'budget' must be positive");
  options["budget_bytes"] = bytes;
  const int64_t batch = opt_integer_field(L, 2, "batch", -1);
  if (batch == -1)
    throw Error("option 'batch' is required (the number of samples in the request, e.g. batch = 12)");
  if (batch < 1)
    throw Error("option 'batch' must be >= 1 (the number of samples in the request), got " +
                std::to_string(batch));
  options["batch"] = batch;
  if (opt_bytes_field(L, 2, "unit", &bytes)) {
    if (bytes == 0) throw Error("option 'unit' must be positive (bytes per memory unit of the planner)");
    options["unit_bytes"] = bytes;
  }
  const double latency = opt_number_field(L, 2, "latency", 0);
  if (latency < 0 || !std::isfinite(latency))
    throw Error("option 'latency' must be a positive number of seconds, got " + std::to_string(latency));
  if (latency > 0) options["latency_bound_s"] = latency;
  lua_getfield(L, 2, "methods");
  if (!lua_isnil(L, -1)) options["methods"] = lua_to_json(L, -1, "option 'methods'");
  lua_pop(L, 1);
  if (opt_bool_field(L, 2, "table", false)) options["table"] = true;
  const double min_gain = opt_number_field(L, 2, "min_gain", 0);
  if (!(min_gain >= 0 && min_gain < 1))
    throw Error("option 'min_gain' must be a fraction in [0, 1), got " + std::to_string(min_gain));
  if (min_gain > 0) options["min_gain"] = min_gain;

  const LoadedPlugin& p = PluginRegistry::instance().require(FRUGAL_KIND_PLANNER, planner);
  lua_getfield(L, 2, "executor");
  const LuaExecutor* ex = lua_isnil(L, -1) ? nullptr : test_executor(L, -1);
  if (!lua_isnil(L, -1) && !ex)
    throw Error("option 'executor' must be an executor (frugal.executor), got " +
                std::string(luaL_typename(L, -1)));
  lua_pop(L, 1);
  if (ex && options.value("table", false))
    throw Error("option 'executor' (moves priced) does not combine with 'table'");
  // With the executor that will run it, the plan's arena moves are priced (docs/COSTS.md, "Moves").
  push_record(L, ex ? make_plan_pricing_moves(p, costs, options, ex->client) : make_plan(p, costs, options),
              Record::Plan);
  return 1;
}

const LuaBinding kFunctions[] = {{"plan", l_plan}, {nullptr, nullptr}};

}  // namespace

void open_lua_plan(lua_State* L, int module_index) {
  register_bindings(L, module_index, kFunctions, "frugal.");
}

}  // namespace frugal
