#include "lua/lua_terminal.h"

#include <unistd.h>

#include <chrono>
#include <string>

#include "frugal/error.h"
#include "lua/lua_binding.h"

namespace frugal {

namespace {

int l_isatty(lua_State* L) {
  int fd = STDOUT_FILENO;
  if (lua_type(L, 1) == LUA_TSTRING) {
    const std::string s = lua_tostring(L, 1);
    if (s == "stdin")
      fd = STDIN_FILENO;
    else if (s == "stdout")
      fd = STDOUT_FILENO;
    else if (s == "stderr")
      fd = STDERR_FILENO;
    else
      throw Error("expected \"stdin\", \"stdout\", \"stderr\" or a file descriptor, got '" + s + "'");
  } else if (!lua_isnoneornil(L, 1)) {
    fd = static_cast<int>(luaL_checkinteger(L, 1));
  }
  lua_pushboolean(L, isatty(fd) == 1);
  return 1;
}

int l_clock(lua_State* L) {
  using clock = std::chrono::steady_clock;
  lua_pushnumber(L, std::chrono::duration<double>(clock::now().time_since_epoch()).count());
  return 1;
}

const LuaBinding kFunctions[] = {{"isatty", l_isatty}, {"clock", l_clock}, {nullptr, nullptr}};

}  // namespace

void open_lua_terminal(lua_State* L, int module_index) {
  register_bindings(L, module_index, kFunctions, "frugal.");
}

}  // namespace frugal
