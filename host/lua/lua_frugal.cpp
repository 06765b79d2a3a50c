#include "lua/lua_frugal.h"

#include <cmath>

#include "cli/byte_size.h"
#include "frugal/error.h"
#include "loader/search_paths.h"
#include "lua/lua_binding.h"
#include "lua/lua_devices.h"
#include "lua/lua_executor.h"
#include "lua/lua_fold.h"
#include "lua/lua_gate.h"
#include "lua/lua_json.h"
#include "lua/lua_model.h"
#include "lua/lua_plan.h"
#include "lua/lua_plugins.h"
#include "lua/lua_predict.h"
#include "lua/lua_profile.h"
#include "lua/lua_records.h"
#include "lua/lua_tensor.h"
#include "lua/lua_terminal.h"
#include "lua/lua_zoo.h"

namespace frugal {

namespace {

int l_parse_bytes(lua_State* L) {
  if (lua_type(L, 1) == LUA_TNUMBER) {
    int ok = 0;
    lua_Integer v = lua_tointegerx(L, 1, &ok);
    if (!ok) {
      double d = lua_tonumber(L, 1);
      if (!std::isfinite(d) || d < 0 || d >= 9.2e18)
        throw Error("memory size " + std::to_string(d) + " is out of range");
      v = static_cast<lua_Integer>(std::floor(d));
    }
    if (v < 0) throw Error("memory size must be >= 0, got " + std::to_string(v));
    lua_pushinteger(L, v);
    return 1;
  }
  lua_pushinteger(L, parse_bytes(check_string_arg(L, 1)));
  return 1;
}

int l_format_bytes(lua_State* L) {
  lua_Integer n = luaL_checkinteger(L, 1);
  std::string s = format_bytes(n, lua_toboolean(L, 2));
  lua_pushlstring(L, s.data(), s.size());
  return 1;
}

int l_script_dir(lua_State* L) {
  lua_pushstring(L, script_dir().c_str());
  return 1;
}

const LuaBinding kFunctions[] = {{"parse_bytes", l_parse_bytes},
                                 {"format_bytes", l_format_bytes},
                                 {"script_dir", l_script_dir},
                                 {nullptr, nullptr}};

}  // namespace

int open_frugal_module(lua_State* L) {
  lua_newtable(L);
  int module = lua_gettop(L);
  lua_pushstring(L, FRUGAL_VERSION);
  lua_setfield(L, module, "version");
  lua_pushboolean(L, 0);  // LuaRunner::set_debug sets it for --debug
  lua_setfield(L, module, "debug");
  register_bindings(L, module, kFunctions, "frugal.");
  open_lua_tensor(L, module);
  open_lua_model(L, module);
  open_lua_zoo(L, module);
  open_lua_plugins(L, module);
  open_lua_json(L, module);
  open_lua_records(L);
  open_lua_terminal(L, module);
  open_lua_executor(L, module);
  open_lua_fold(L, module);
  open_lua_gate(L, module);
  open_lua_profile(L, module);
  open_lua_predict(L, module);
  open_lua_plan(L, module);
  open_lua_devices(L, module);
  return 1;
}

}  // namespace frugal
