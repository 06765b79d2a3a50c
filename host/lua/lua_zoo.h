// The model zoo in Lua: frugal.zoo(name [, {seed = 1}]) builds a network in
// memory (a frugal.Model whose origin is "zoo:NAME"); frugal.zoo_names() lists them.
#pragma once

#include <lua.hpp>

namespace frugal {

void open_lua_zoo(lua_State* L, int module_index);

}  // namespace frugal
