// The `frugal` Lua module: every binding, assembled into one table. Also
//   frugal.version                    "0.1.0"
//   frugal.parse_bytes("20MB")        20000000 (MB = 10^6, MiB = 2^20; numbers pass through)
//   frugal.format_bytes(n [, binary]) "20.0 MB" / "19.1 MiB"
//   frugal.script_dir()               where the CLI's sub-command scripts live
#pragma once

#include <lua.hpp>

namespace frugal {

// Pushes the module table (also stored in package.loaded.frugal).
int open_frugal_module(lua_State* L);

}  // namespace frugal
