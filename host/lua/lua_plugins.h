// Plugins in Lua: frugal.plugins() scans the plugin folders (the build's, then
// FRUGAL_PLUGIN_PATH) and returns
//   { plugins = { {name=, kind=, version=, description=, file=}, ... },
//     refused = { {file=, reason=}, ... },
//     dirs = { folder, ... } }
// frugal.load_plugin(path) loads one more file: returns its entry, or nil and
// the reason it was refused.
#pragma once

#include <lua.hpp>

namespace frugal {

void open_lua_plugins(lua_State* L, int module_index);

}  // namespace frugal
