// frugal.devices(): the compute devices the executor plugins can use (see
// lua_devices.cpp for the table it returns).
#pragma once

#include <lua.hpp>

namespace frugal {

void open_lua_devices(lua_State* L, int module_index);

}  // namespace frugal
