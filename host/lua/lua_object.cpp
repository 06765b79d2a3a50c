#include "lua/lua_object.h"

#include <cstring>

namespace frugal {

namespace lua_object_detail {

void** push_closed_slot(lua_State* L, const LuaObjectType& type) {
  auto** slot = static_cast<void**>(lua_newuserdatauv(L, sizeof(void*), 0));
  *slot = nullptr;
  luaL_setmetatable(L, type.metatable);  // from here on __gc owns *slot
  return slot;
}

void** check_slot(lua_State* L, int idx, const LuaObjectType& type) {
  return static_cast<void**>(luaL_checkudata(L, idx, type.metatable));
}

void throw_closed(int idx, const LuaObjectType& type) {
  throw Error("argument #" + std::to_string(idx) + " is a closed " + type.noun);
}

namespace {

// Upvalues: 1 the metatable name, 2 the type's own __tostring (or nil).
int tostring_or_closed(lua_State* L) {
  const char* mt = lua_tostring(L, lua_upvalueindex(1));
  auto** slot = static_cast<void**>(luaL_checkudata(L, 1, mt));
  if (!*slot || lua_isnil(L, lua_upvalueindex(2))) {
    lua_pushfstring(L, "%s%s", mt, *slot ? "" : " (closed)");
    return 1;
  }
  lua_pushvalue(L, lua_upvalueindex(2));
  lua_pushvalue(L, 1);
  lua_call(L, 1, 1);
  return 1;
}

void set_closure(lua_State* L, int table, const char* field, const char* mt, lua_CFunction fn) {
  lua_pushstring(L, mt);
  lua_pushcclosure(L, fn, 1);
  lua_setfield(L, table, field);
}

}  // namespace

void create_metatable(lua_State* L, const LuaObjectType& type, lua_CFunction gc_fn, const LuaBinding* methods,
                      const LuaBinding* metamethods) {
  luaL_newmetatable(L, type.metatable);  // also sets __name
  const int meta = lua_gettop(L);
  set_closure(L, meta, "__gc", type.metatable, gc_fn);
  set_closure(L, meta, "__close", type.metatable, gc_fn);
  if (metamethods) register_bindings(L, meta, metamethods, "");
  // __tostring: the type's own for open objects, "<name> (closed)" for closed ones.
  lua_pushstring(L, type.metatable);
  lua_getfield(L, meta, "__tostring");
  lua_pushcclosure(L, tostring_or_closed, 2);
  lua_setfield(L, meta, "__tostring");

  lua_newtable(L);
  const int table = lua_gettop(L);
  if (methods) register_bindings(L, table, methods, (std::string(type.noun) + ":").c_str());
  set_closure(L, table, "close", type.metatable, gc_fn);
  lua_pushvalue(L, table);
  lua_setfield(L, meta, "__methods");  // for a type whose __index is a function
  if (lua_getfield(L, meta, "__index") == LUA_TNIL) {
    lua_pop(L, 1);
    lua_setfield(L, meta, "__index");
  } else {
    lua_pop(L, 2);
  }
  lua_settop(L, meta - 1);
}

}  // namespace lua_object_detail

}  // namespace frugal
