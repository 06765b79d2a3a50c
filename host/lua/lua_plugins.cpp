#include "lua/lua_plugins.h"

#include "loader/plugin_registry.h"
#include "lua/lua_binding.h"

namespace frugal {

namespace {

void set_string(lua_State* L, const char* key, const std::string& v) {
  lua_pushlstring(L, v.data(), v.size());
  lua_setfield(L, -2, key);
}

void push_plugin(lua_State* L, const LoadedPlugin& p) {
  lua_createtable(L, 0, 5);
  set_string(L, "name", p.name);
  set_string(L, "kind", kind_name(p.kind));
  set_string(L, "version", p.version);
  set_string(L, "description", p.description);
  set_string(L, "file", p.file);
}

int l_plugins(lua_State* L) {
  PluginRegistry& r = PluginRegistry::instance();
  r.scan();  // only adds files not seen yet
  lua_createtable(L, 0, 3);
  lua_createtable(L, static_cast<int>(r.plugins().size()), 0);
  for (size_t i = 0; i < r.plugins().size(); ++i) {
    push_plugin(L, r.plugins()[i]);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i) + 1);
  }
  lua_setfield(L, -2, "plugins");
  lua_createtable(L, static_cast<int>(r.refused().size()), 0);
  for (size_t i = 0; i < r.refused().size(); ++i) {
    lua_createtable(L, 0, 2);
    set_string(L, "file", r.refused()[i].file);
    set_string(L, "reason", r.refused()[i].reason);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i) + 1);
  }
  lua_setfield(L, -2, "refused");
  push_string_list(L, r.scanned_dirs());
  lua_setfield(L, -2, "dirs");
  return 1;
}

int l_load_plugin(lua_State* L) {
  std::string why;
  const LoadedPlugin* p = PluginRegistry::instance().load_file(check_string_arg(L, 1), &why);
  if (!p) {
    lua_pushnil(L);
    lua_pushlstring(L, why.data(), why.size());
    return 2;
  }
  push_plugin(L, *p);
  return 1;
}

const LuaBinding kFunctions[] = {{"plugins", l_plugins}, {"load_plugin", l_load_plugin}, {nullptr, nullptr}};

}  // namespace

void open_lua_plugins(lua_State* L, int module_index) {
  register_bindings(L, module_index, kFunctions, "frugal.");
}

}  // namespace frugal
