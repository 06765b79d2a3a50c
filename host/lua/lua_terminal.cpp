#include "lua/lua_terminal.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <string>

#include "frugal/error.h"
#include "lua/lua_binding.h"

namespace frugal {

namespace {

// The file descriptor named at idx: "stdin", "stdout" (default), "stderr" or a number.
int stream_arg(lua_State* L, int idx) {
  int fd = STDOUT_FILENO;
  if (lua_type(L, idx) == LUA_TSTRING) {
    const std::string s = lua_tostring(L, idx);
    if (s == "stdin")
      fd = STDIN_FILENO;
    else if (s == "stdout")
      fd = STDOUT_FILENO;
    else if (s == "stderr")
      fd = STDERR_FILENO;
    else
      throw Error("expected \"stdin\", \"stdout\", \"stderr\" or a file descriptor, got '" + s + "'");
  } else if (!lua_isnoneornil(L, idx)) {
    fd = static_cast<int>(luaL_checkinteger(L, idx));
  }
  return fd;
}

int l_isatty(lua_State* L) {
  lua_pushboolean(L, isatty(stream_arg(L, 1)) == 1);
  return 1;
}

// Columns of the terminal on the stream, or nil when it is not a terminal.
int l_terminal_columns(lua_State* L) {
  const int columns = terminal_columns(stream_arg(L, 1));
  if (columns > 0)
    lua_pushinteger(L, columns);
  else
    lua_pushnil(L);
  return 1;
}

int l_clock(lua_State* L) {
  using clock = std::chrono::steady_clock;
  lua_pushnumber(L, std::chrono::duration<double>(clock::now().time_since_epoch()).count());
  return 1;
}

const LuaBinding kFunctions[] = {
    {"isatty", l_isatty}, {"terminal_columns", l_terminal_columns}, {"clock", l_clock}, {nullptr, nullptr}};

}  // namespace

int terminal_columns(int fd) {
  winsize w{};
  if (isatty(fd) != 1 || ioctl(fd, TIOCGWINSZ, &w) != 0) return 0;
  return w.ws_col;
}

void open_lua_terminal(lua_State* L, int module_index) {
  register_bindings(L, module_index, kFunctions, "frugal.");
}

}  // namespace frugal
