// Small terminal and clock helpers for scripts:
//   frugal.isatty("stderr" | "stdout" | "stdin" | fd)  -> true when a terminal
//   frugal.terminal_columns("stderr" | ...)  -> the terminal's width, or nil
//   frugal.clock()   -> monotonic wall-clock seconds (os.clock is CPU time)
#pragma once

#include <lua.hpp>

namespace frugal {

void open_lua_terminal(lua_State* L, int module_index);

// Columns of the terminal on fd; 0 when fd is not a terminal or does not say.
int terminal_columns(int fd);

}  // namespace frugal
