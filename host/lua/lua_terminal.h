// Small terminal and clock helpers for scripts:
//   frugal.isatty("stderr" | "stdout" | "stdin" | fd)  -> true when a terminal
//   frugal.clock()   -> monotonic wall-clock seconds (os.clock is CPU time)
#pragma once

#include <lua.hpp>

namespace frugal {

void open_lua_terminal(lua_State* L, int module_index);

}  // namespace frugal
