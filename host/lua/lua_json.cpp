#include "lua/lua_json.h"

#include <cmath>
#include <vector>

#include "frugal/error.h"
#include "lua/lua_binding.h"
#include "profiler/json_file.h"
#include "profiler/json_path.h"

namespace frugal {

namespace {

constexpr const char* kObjectMarker = "frugal.json_object";
constexpr int kMaxDepth = 200;  // deeper is a cycle or a mistake

void push_json_at(lua_State* L, const nlohmann::json& j, int depth) {
  if (depth > kMaxDepth) throw Error("JSON nested deeper than " + std::to_string(kMaxDepth) + " levels");
  luaL_checkstack(L, 3, "JSON to Lua");
  switch (j.type()) {
    case nlohmann::json::value_t::null:
      lua_pushnil(L);
      break;
    case nlohmann::json::value_t::boolean:
      lua_pushboolean(L, j.get<bool>());
      break;
    case nlohmann::json::value_t::number_integer:
      lua_pushinteger(L, j.get<int64_t>());
      break;
    case nlohmann::json::value_t::number_unsigned: {
      const uint64_t v = j.get<uint64_t>();
      if (v <= static_cast<uint64_t>(INT64_MAX))
        lua_pushinteger(L, static_cast<lua_Integer>(v));
      else
        lua_pushnumber(L, static_cast<lua_Number>(v));
      break;
    }
    case nlohmann::json::value_t::number_float:
      lua_pushnumber(L, j.get<double>());
      break;
    case nlohmann::json::value_t::string: {
      const std::string& s = j.get_ref<const std::string&>();
      lua_pushlstring(L, s.data(), s.size());
      break;
    }
    case nlohmann::json::value_t::array: {
      lua_createtable(L, static_cast<int>(j.size()), 0);
      lua_Integer i = 1;
      for (const auto& e : j) {
        push_json_at(L, e, depth + 1);
        lua_rawseti(L, -2, i++);
      }
      break;
    }
    case nlohmann::json::value_t::object: {
      lua_createtable(L, 0, static_cast<int>(j.size()));
      if (j.empty()) luaL_setmetatable(L, kObjectMarker);
      for (auto it = j.begin(); it != j.end(); ++it) {
        push_json_at(L, it.value(), depth + 1);
        lua_setfield(L, -2, it.key().c_str());
      }
      break;
    }
    default:
      throw Error("JSON value of type " + std::string(j.type_name()) + " has no Lua form");
  }
}

std::string key_path(const std::string& where, lua_State* L, int key_idx) {
  if (lua_type(L, key_idx) == LUA_TNUMBER) return where + "[" + std::string(lua_tostring(L, key_idx)) + "]";
  return where + "." + std::string(lua_tostring(L, key_idx));
}

nlohmann::json to_json_at(lua_State* L, int idx, const std::string& where, int depth) {
  idx = lua_absindex(L, idx);
  if (depth > kMaxDepth)
    throw Error(where + ": nested deeper than " + std::to_string(kMaxDepth) +
                " levels (a table that contains itself?)");
  switch (lua_type(L, idx)) {
    case LUA_TNIL:
      return nullptr;
    case LUA_TBOOLEAN:
      return static_cast<bool>(lua_toboolean(L, idx));
    case LUA_TNUMBER: {
      if (lua_isinteger(L, idx)) return static_cast<int64_t>(lua_tointeger(L, idx));
      const double d = lua_tonumber(L, idx);
      if (std::isnan(d)) throw Error(where + " is NaN");
      if (!std::isfinite(d)) throw Error(where + " is infinite");
      return d;
    }
    case LUA_TSTRING: {
      size_t n = 0;
      const char* s = lua_tolstring(L, idx, &n);
      return std::string(s, n);
    }
    case LUA_TTABLE:
      break;
    default:
      throw Error(where + " is a " + std::string(luaL_typename(L, idx)) + ", which has no JSON form");
  }
  luaL_checkstack(L, 4, "Lua to JSON");
  // Count the keys and see whether they are exactly 1..n.
  lua_Integer count = 0;
  bool all_positive_integers = true;
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    ++count;
    if (!lua_isinteger(L, -2) || lua_tointeger(L, -2) < 1) all_positive_integers = false;
    lua_pop(L, 1);
  }
  const bool is_array = all_positive_integers && static_cast<lua_Integer>(lua_rawlen(L, idx)) == count;
  if (count == 0) {
    bool marked_object = false;
    if (lua_getmetatable(L, idx)) {
      luaL_getmetatable(L, kObjectMarker);
      marked_object = lua_rawequal(L, -1, -2);
      lua_pop(L, 2);
    }
    return marked_object ? nlohmann::json::object() : nlohmann::json::array();
  }
  if (is_array) {
    nlohmann::json a = nlohmann::json::array();
    for (lua_Integer i = 1; i <= count; ++i) {
      lua_rawgeti(L, idx, i);
      a.push_back(to_json_at(L, -1, where + "[" + std::to_string(i) + "]", depth + 1));
      lua_pop(L, 1);
    }
    return a;
  }
  nlohmann::json o = nlohmann::json::object();
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    if (lua_type(L, -2) != LUA_TSTRING) {
      const std::string kt = luaL_typename(L, -2);
      throw Error(where + " mixes keys: a table with a " + kt +
                  " key is neither a JSON array (keys 1..n) nor an object (string keys)");
    }
    const std::string path = key_path(where, L, -2);
    // lua_next needs the key untouched: copy it before converting the value.
    size_t n = 0;
    const char* k = lua_tolstring(L, -2, &n);
    std::string key(k, n);
    o[key] = to_json_at(L, -1, path, depth + 1);
    lua_pop(L, 1);
  }
  return o;
}

// ---- module functions -------------------------------------------------------

int l_json_encode(lua_State* L) {
  const int indent = lua_isnoneornil(L, 2) ? -1 : static_cast<int>(luaL_checkinteger(L, 2));
  const std::string s = lua_to_json(L, 1, "value").dump(indent);
  lua_pushlstring(L, s.data(), s.size());
  return 1;
}

int l_json_decode(lua_State* L) {
  push_json(L, parse_json_text(check_string_arg(L, 1), "JSON text"));
  return 1;
}

int l_load_json(lua_State* L) {
  const std::string path = check_string_arg(L, 1);
  const nlohmann::json j = read_json_file(path);
  // A null element would be a hole in the Lua array (ipairs stops there, # is undefined).
  const std::string hole = first_null_in_array(j);
  if (!hole.empty())
    throw Error(path + ": " + hole +
                " is null: an element of a list must have a value (a measurement that failed?)");
  push_json(L, j);
  return 1;
}

int l_save_json(lua_State* L) {
  const std::string path = check_string_arg(L, 2);
  const int indent = lua_isnoneornil(L, 3) ? 1 : static_cast<int>(luaL_checkinteger(L, 3));
  write_json_file(lua_to_json(L, 1, "value"), path, indent);
  return 0;
}

const LuaBinding kFunctions[] = {{"json_encode", l_json_encode},
                                 {"json_decode", l_json_decode},
                                 {"load_json", l_load_json},
                                 {"save_json", l_save_json},
                                 {nullptr, nullptr}};

}  // namespace

void push_json(lua_State* L, const nlohmann::json& j) { push_json_at(L, j, 0); }

nlohmann::json lua_to_json(lua_State* L, int idx, const std::string& where) {
  return to_json_at(L, idx, where, 0);
}

void open_lua_json(lua_State* L, int module_index) {
  module_index = lua_absindex(L, module_index);
  luaL_newmetatable(L, kObjectMarker);
  lua_pop(L, 1);
  register_bindings(L, module_index, kFunctions, "frugal.");
}

}  // namespace frugal
