// JSON <-> Lua, for the data plugins exchange as JSON (cost tables, plans,
// reports). Also the module functions
//   frugal.json_encode(value [, indent]) -> text     frugal.json_decode(text) -> value
//   frugal.save_json(value, path [, indent])          frugal.load_json(path) -> value
//
// JSON -> Lua: objects become tables with string keys, arrays sequences (index
// 1 = element 0), null nil, integers Lua integers. An empty object gets a
// marker metatable so that it converts back to {} and not [].
// Lua -> JSON: a table whose keys are exactly 1..n is an array, an empty table
// an empty array (unless marked as an object), any other table with string keys
// an object. NaN and infinities are refused with the path of the value
// ("costs.layers[2].time_s[3] is NaN"): JSON has no such numbers.
#pragma once

#include <lua.hpp>
#include <nlohmann/json.hpp>
#include <string>

namespace frugal {

void push_json(lua_State* L, const nlohmann::json& j);
// push_json(L, parse(text)) without the parsed document in between: each value goes
// straight into its Lua table as the parser reads it (a run report per run: 125
// steps of EfficientNet-B0 cost a parse and a walk of 0.26 ms before).
// Invalid text throws Error("WHAT is not valid JSON: ...") with nothing pushed.
void push_json_text(lua_State* L, const std::string& text, const std::string& what);
// `where` names the value in messages ("costs", "plan").
nlohmann::json lua_to_json(lua_State* L, int idx, const std::string& where);

void open_lua_json(lua_State* L, int module_index);

}  // namespace frugal
