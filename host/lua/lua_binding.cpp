#include "lua/lua_binding.h"

#include <exception>

#include "frugal/error.h"

namespace frugal {

namespace {

// Upvalue 1: the LuaBinding; upvalue 2: the prefix string.
int call_guarded(lua_State* L) {
  const auto* b = static_cast<const LuaBinding*>(lua_touserdata(L, lua_upvalueindex(1)));
  std::string message;
  try {
    return b->fn(L);
  } catch (const std::exception& e) {
    std::string who = b->label ? b->label : std::string(lua_tostring(L, lua_upvalueindex(2))) + b->name;
    message = who + ": " + e.what();
  }
  // Outside the handler: luaL_error unwinds with Lua's own exception.
  return luaL_error(L, "%s", message.c_str());
}

}  // namespace

void register_bindings(lua_State* L, int table_index, const LuaBinding* list, const char* prefix) {
  table_index = lua_absindex(L, table_index);
  for (const LuaBinding* b = list; b->name; ++b) {
    lua_pushlightuserdata(L, const_cast<LuaBinding*>(b));
    lua_pushstring(L, prefix);
    lua_pushcclosure(L, call_guarded, 2);
    lua_setfield(L, table_index, b->name);
  }
}

std::string check_string_arg(lua_State* L, int idx) {
  size_t len = 0;
  const char* s = luaL_checklstring(L, idx, &len);
  return std::string(s, len);
}

int64_t check_nonnegative_integer(lua_State* L, int idx, const char* what) {
  lua_Integer v = luaL_checkinteger(L, idx);
  if (v < 0) throw Error(std::string(what) + " must be >= 0, got " + std::to_string(v));
  return static_cast<int64_t>(v);
}

std::vector<int64_t> check_integer_list(lua_State* L, int idx, const char* what) {
  idx = lua_absindex(L, idx);
  luaL_checktype(L, idx, LUA_TTABLE);
  std::vector<int64_t> out;
  lua_Integer n = luaL_len(L, idx);
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_geti(L, idx, i);
    int ok = 0;
    lua_Integer v = lua_tointegerx(L, -1, &ok);
    if (!ok)
      throw Error(std::string(what) + "[" + std::to_string(i) + "] must be an integer, got " +
                  (lua_type(L, -1) == LUA_TNUMBER ? std::string(lua_tostring(L, -1)) : luaL_typename(L, -1)));
    out.push_back(static_cast<int64_t>(v));
    lua_pop(L, 1);
  }
  return out;
}

int64_t opt_integer_field(lua_State* L, int idx, const char* field, int64_t def) {
  if (lua_isnoneornil(L, idx)) return def;
  luaL_checktype(L, idx, LUA_TTABLE);
  lua_getfield(L, idx, field);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return def;
  }
  int ok = 0;
  lua_Integer v = lua_tointegerx(L, -1, &ok);
  if (!ok) throw Error(std::string("option '") + field + "' must be an integer, got " + luaL_typename(L, -1));
  lua_pop(L, 1);
  return static_cast<int64_t>(v);
}

void push_string_list(lua_State* L, const std::vector<std::string>& items) {
  lua_createtable(L, static_cast<int>(items.size()), 0);
  for (size_t i = 0; i < items.size(); ++i) {
    lua_pushlstring(L, items[i].data(), items[i].size());
    lua_rawseti(L, -2, static_cast<lua_Integer>(i) + 1);
  }
}

void push_integer_list(lua_State* L, const std::vector<int64_t>& items) {
  lua_createtable(L, static_cast<int>(items.size()), 0);
  for (size_t i = 0; i < items.size(); ++i) {
    lua_pushinteger(L, static_cast<lua_Integer>(items[i]));
    lua_rawseti(L, -2, static_cast<lua_Integer>(i) + 1);
  }
}

}  // namespace frugal
