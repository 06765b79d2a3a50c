// Results that scripts print: plans, run and fold reports, cost tables. They
// are plain Lua tables (their JSON, docs/PLAN.md, docs/COSTS.md) with a
// metatable whose __tostring says what they hold, so print(plan) shows the
// plan's summary and print(report) a line of figures, not "table: 0x...".
#pragma once

#include <lua.hpp>
#include <nlohmann/json.hpp>
#include <string>

namespace frugal {

enum class Record { Plan, RunReport, FoldReport, CostTable };

// push_json (lua_json.h) with the record's metatable.
void push_record(lua_State* L, const nlohmann::json& j, Record kind);
// The same from JSON text (push_json_text; "" pushes an empty object); `what` names it in messages.
void push_record_text(lua_State* L, const std::string& text, const std::string& what, Record kind);

void open_lua_records(lua_State* L);

}  // namespace frugal
