#include "lua/lua_options.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "cli/byte_size.h"
#include "frugal/error.h"

namespace frugal {

void check_option_names(lua_State* L, int idx, std::initializer_list<const char*> known) {
  if (lua_isnoneornil(L, idx)) return;
  if (!lua_istable(L, idx)) throw Error("options must be a table, got " + std::string(luaL_typename(L, idx)));
  idx = lua_absindex(L, idx);
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    lua_pop(L, 1);
    std::string name = lua_type(L, -1) == LUA_TSTRING ? lua_tostring(L, -1) : std::string();
    const bool ok =
        !name.empty() && std::any_of(known.begin(), known.end(), [&](const char* k) { return name == k; });
    if (!ok) {
      std::string list;
      for (const char* k : known) list += (list.empty() ? "" : ", ") + std::string(k);
      if (name.empty())
        name = std::string("a ") + luaL_typename(L, -1) + " key";
      else
        name = "'" + name + "'";
      lua_pop(L, 1);
      throw Error("unknown option " + name + " (known: " + list + ")");
    }
  }
}

uint64_t check_bytes_value(lua_State* L, int idx, const std::string& what) {
  if (lua_type(L, idx) == LUA_TSTRING) {
    try {
      return static_cast<uint64_t>(parse_bytes(lua_tostring(L, idx)));
    } catch (const std::exception& e) {
      throw Error(what + ": " + e.what());
    }
  }
  if (lua_type(L, idx) != LUA_TNUMBER)
    throw Error(what + " must be a number of bytes or a size such as \"64MB\", got " + luaL_typename(L, idx));
  if (lua_isinteger(L, idx)) {
    const lua_Integer v = lua_tointeger(L, idx);
    if (v < 0) throw Error(what + " must be >= 0, got " + std::to_string(v));
    return static_cast<uint64_t>(v);
  }
  const double d = lua_tonumber(L, idx);
  if (!std::isfinite(d) || d < 0 || d >= 9.2e18)
    throw Error(what + " " + std::to_string(d) + " is out of range");
  return static_cast<uint64_t>(std::floor(d));
}

namespace {

// Pushes the field (or nil when there is no table).
void get_field(lua_State* L, int idx, const char* field) {
  if (lua_isnoneornil(L, idx)) {
    lua_pushnil(L);
    return;
  }
  luaL_checktype(L, idx, LUA_TTABLE);
  lua_getfield(L, idx, field);
}

}  // namespace

std::string opt_string_field(lua_State* L, int idx, const char* field, const std::string& def) {
  get_field(L, idx, field);
  std::string v = def;
  if (lua_type(L, -1) == LUA_TSTRING)
    v = lua_tostring(L, -1);
  else if (!lua_isnil(L, -1))
    throw Error(std::string("option '") + field + "' must be a string, got " + luaL_typename(L, -1));
  lua_pop(L, 1);
  return v;
}

bool opt_bool_field(lua_State* L, int idx, const char* field, bool def) {
  get_field(L, idx, field);
  bool v = def;
  if (lua_isboolean(L, -1))
    v = lua_toboolean(L, -1);
  else if (!lua_isnil(L, -1))
    throw Error(std::string("option '") + field + "' must be true or false, got " + luaL_typename(L, -1));
  lua_pop(L, 1);
  return v;
}

double opt_number_field(lua_State* L, int idx, const char* field, double def) {
  get_field(L, idx, field);
  double v = def;
  if (lua_type(L, -1) == LUA_TNUMBER)
    v = lua_tonumber(L, -1);
  else if (!lua_isnil(L, -1))
    throw Error(std::string("option '") + field + "' must be a number, got " + luaL_typename(L, -1));
  lua_pop(L, 1);
  if (std::isnan(v)) throw Error(std::string("option '") + field + "' is NaN");
  return v;
}

bool opt_bytes_field(lua_State* L, int idx, const char* field, uint64_t* out) {
  get_field(L, idx, field);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return false;
  }
  *out = check_bytes_value(L, -1, std::string("option '") + field + "'");
  lua_pop(L, 1);
  return true;
}

}  // namespace frugal
