#include "lua/lua_records.h"

#include <cstdio>
#include <string>
#include <string_view>
#include <utility>

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

// ---- a run report's steps, decoded when first read --------------------------
// One table per plan step was most of what turning a report into Lua cost
// (EfficientNet-B0 has 125 steps; a few percent of a batch-1 run), and most
// callers never read them. The steps' JSON text waits in a weak-keyed registry
// table until report.steps, pairs(report) or a conversion to JSON needs it.

constexpr const char* kPendingSteps = "frugal.RunReport.pending_steps";

// Decodes the pending steps of the report at idx into its "steps" field (unless
// a script has set one meanwhile). Pushes nothing.
void materialize_steps(lua_State* L, int idx) {
  idx = lua_absindex(L, idx);
  lua_getfield(L, LUA_REGISTRYINDEX, kPendingSteps);
  lua_pushvalue(L, idx);
  if (lua_rawget(L, -2) != LUA_TSTRING) {
    lua_pop(L, 2);
    return;
  }
  size_t n = 0;
  const char* text = lua_tolstring(L, -1, &n);
  const std::string steps(text, n);
  lua_pop(L, 1);
  lua_pushvalue(L, idx);  // forget it first: a decoding error must not repeat on every read
  lua_pushnil(L);
  lua_rawset(L, -3);
  lua_pop(L, 1);
  lua_pushliteral(L, "steps");
  if (lua_rawget(L, idx) != LUA_TNIL) {
    lua_pop(L, 1);
    return;
  }
  lua_pop(L, 1);
  push_json_text(L, steps, "the run report's steps");
  lua_setfield(L, idx, "steps");  // a plain table with no __newindex: a raw set
}

int run_report_index(lua_State* L) {
  if (lua_type(L, 2) == LUA_TSTRING && std::string_view(lua_tostring(L, 2)) == "steps") {
    materialize_steps(L, 1);
    lua_pushliteral(L, "steps");
    lua_rawget(L, 1);
    return 1;
  }
  lua_pushnil(L);
  return 1;
}

int run_report_materialize(lua_State* L) {
  materialize_steps(L, 1);
  return 0;
}

int run_report_pairs(lua_State* L) {
  materialize_steps(L, 1);
  lua_getglobal(L, "next");
  lua_pushvalue(L, 1);
  lua_pushnil(L);
  return 3;
}

// The top-level member `key` of the JSON object in text: the span of its value,
// or {0, 0} where there is none. Assumes valid JSON (the parser checks it after).
std::pair<size_t, size_t> member_value_span(const std::string& text, std::string_view key) {
  const size_t n = text.size();
  size_t i = 0;
  auto skip_space = [&] {
    while (i < n && (text[i] == ' ' || text[i] == '\n' || text[i] == '\t' || text[i] == '\r')) ++i;
  };
  auto skip_string = [&] {  // at the opening quote; stops after the closing one
    for (++i; i < n && text[i] != '"'; ++i)
      if (text[i] == '\\') ++i;
    ++i;
  };
  auto skip_value = [&] {  // stops after a string or container, at the ',' or '}' after a scalar
    for (int depth = 0; i < n;) {
      const char c = text[i];
      if (c == '"') {
        skip_string();
        if (depth == 0) return;
        continue;
      }
      if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (depth == 0) return;
        ++i;
        if (--depth == 0) return;
        continue;
      } else if (c == ',' && depth == 0) {
        return;
      }
      ++i;
    }
  };
  skip_space();
  if (i >= n || text[i] != '{') return {0, 0};
  ++i;
  while (true) {
    skip_space();
    if (i >= n || text[i] != '"') return {0, 0};
    const size_t k0 = i + 1;
    skip_string();
    if (i > n) return {0, 0};
    const std::string_view name(text.data() + k0, i - 1 - k0);
    skip_space();
    if (i >= n || text[i] != ':') return {0, 0};
    ++i;
    skip_space();
    const size_t v0 = i;
    skip_value();
    if (name == key) return {v0, i};
    skip_space();
    if (i >= n || text[i] != ',') return {0, 0};
    ++i;
  }
}

void push_run_report_text(lua_State* L, const std::string& text, const std::string& what) {
  const auto [v0, v1] = member_value_span(text, "steps");
  if (v1 <= v0 || v1 > text.size() || text[v0] != '[' || text[v1 - 1] != ']') {
    push_json_text(L, text, what);
    return;
  }
  push_json_text(L, text.substr(0, v0) + "null" + text.substr(v1), what);
  lua_getfield(L, LUA_REGISTRYINDEX, kPendingSteps);
  lua_pushvalue(L, -2);
  lua_pushlstring(L, text.data() + v0, v1 - v0);
  lua_rawset(L, -3);
  lua_pop(L, 1);
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
  if (text.empty()) {
    push_json(L, nlohmann::json::object());
  } else if (kind == Record::RunReport) {
    push_run_report_text(L, text, what);
  } else {
    push_json_text(L, text, what);
  }
  luaL_setmetatable(L, kMetatables[static_cast<int>(kind)]);
}

void open_lua_records(lua_State* L) {
  static const LuaBinding kPlan[] = {{"__tostring", plan_tostring, "tostring(plan)"}, {nullptr, nullptr}};
  static const LuaBinding kRun[] = {{"__tostring", run_report_tostring, "tostring(report)"},
                                    {"__index", run_report_index, "report.steps"},
                                    {"__pairs", run_report_pairs, "pairs(report)"},
                                    {"__materialize", run_report_materialize, "the run report's steps"},
                                    {nullptr, nullptr}};
  static const LuaBinding kFold[] = {{"__tostring", fold_report_tostring, "tostring(report)"},
                                     {nullptr, nullptr}};
  static const LuaBinding kCosts[] = {{"__tostring", cost_table_tostring, "tostring(costs)"},
                                      {nullptr, nullptr}};
  lua_newtable(L);  // kPendingSteps: report table -> its steps' text, weak keys
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "k");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, kPendingSteps);
  const LuaBinding* lists[] = {kPlan, kRun, kFold, kCosts};
  for (int k = 0; k < 4; ++k) {
    luaL_newmetatable(L, kMetatables[k]);
    register_bindings(L, -1, lists[k], "");
    lua_pop(L, 1);
  }
}

}  // namespace frugal
