#include "lua/lua_records.h"

#include <cstdio>
#include <string>

#include "frugal/error.h"
#include "lua/lua_binding.h"
#include "lua/lua_json.h"

namespace frugal {

namespace {

constexpr const char* kMetatables[] = {"frugal.Plan", "frugal.RunReport", "frugal.FoldReport",
                                       "frugal.CostTable"};

std::string number_text(const nlohmann::json& j, const char* key, const char* format) {
  if (!j.contains(key) || !j[key].is_number()) return "?";
  char b[64];
  std::snprintf(b, sizeof b, format, j[key].get<double>());
  return b;
}

std::string string_field(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : "?";
}

std::string count_of(const nlohmann::json& j, const char* key) {
  return j.contains(key) && j[key].is_array() ? std::to_string(j[key].size()) : "?";
}

// The plan's summary is scripts/lib/plan_summary.lua, as the commands print it.
int plan_tostring(lua_State* L) {
  lua_getglobal(L, "require");
  lua_pushstring(L, "plan_summary");
  lua_call(L, 1, 1);
  lua_getfield(L, -1, "text");
  lua_pushvalue(L, 1);
  lua_call(L, 1, 1);
  return 1;
}

int run_report_tostring(lua_State* L) {
  const nlohmann::json r = lua_to_json(L, 1, "report");
  std::string s = "frugal.RunReport: " + number_text(r, "seconds", "%.4g") + " s, peak arena " +
                  number_text(r, "peak_bytes", "%.0f") + " bytes";
  if (r.contains("budget_bytes")) s += " of a budget of " + number_text(r, "budget_bytes", "%.0f");
  s += ", " + count_of(r, "steps") + " steps";
  lua_pushlstring(L, s.data(), s.size());
  return 1;
}

int fold_report_tostring(lua_State* L) {
  const nlohmann::json r = lua_to_json(L, 1, "report");
  const std::string s = "frugal.FoldReport: " + string_field(r, "method") + " folded " +
                        number_text(r, "bn_folded", "%.0f") + " of " + number_text(r, "bn_total", "%.0f") +
                        " BatchNorm nodes, " + number_text(r, "parameters_removed", "%.0f") +
                        " initializer values removed";
  lua_pushlstring(L, s.data(), s.size());
  return 1;
}

int cost_table_tostring(lua_State* L) {
  const nlohmann::json c = lua_to_json(L, 1, "costs");
  const std::string s =
      "frugal.CostTable: model '" + string_field(c, "model") + "' on " + string_field(c, "executor") + " (" +
      string_field(c, "device") + "), " + count_of(c, "layers") + " layers, batch sizes 1.." +
      number_text(c, "batch_max", "%.0f") + ", " + count_of(c, "measured_batches") + " of them measured";
  lua_pushlstring(L, s.data(), s.size());
  return 1;
}

}  // namespace

void push_record(lua_State* L, const nlohmann::json& j, Record kind) {
  push_json(L, j);
  luaL_setmetatable(L, kMetatables[static_cast<int>(kind)]);
}

void push_record_text(lua_State* L, const std::string& text, const std::string& what, Record kind) {
  if (text.empty())
    push_json(L, nlohmann::json::object());
  else
    push_json_text(L, text, what);
  luaL_setmetatable(L, kMetatables[static_cast<int>(kind)]);
}

void open_lua_records(lua_State* L) {
  static const LuaBinding kPlan[] = {{"__tostring", plan_tostring, "tostring(plan)"}, {nullptr, nullptr}};
  static const LuaBinding kRun[] = {{"__tostring", run_report_tostring, "tostring(report)"},
                                    {nullptr, nullptr}};
  static const LuaBinding kFold[] = {{"__tostring", fold_report_tostring, "tostring(report)"},
                                     {nullptr, nullptr}};
  static const LuaBinding kCosts[] = {{"__tostring", cost_table_tostring, "tostring(costs)"},
                                      {nullptr, nullptr}};
  const LuaBinding* lists[] = {kPlan, kRun, kFold, kCosts};
  for (int k = 0; k < 4; ++k) {
    luaL_newmetatable(L, kMetatables[k]);
    register_bindings(L, -1, lists[k], "");
    lua_pop(L, 1);
  }
}

}  // namespace frugal
