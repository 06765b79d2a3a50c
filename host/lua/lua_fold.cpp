#include "lua/lua_fold.h"

#include "loader/folder_client.h"
#include "loader/plugin_registry.h"
#include "lua/lua_binding.h"
#include "lua/lua_json.h"
#include "lua/lua_model.h"
#include "lua/lua_options.h"
#include "lua/lua_records.h"

namespace frugal {

namespace {

int l_fold(lua_State* L) {
  const LuaModel& m = check_model(L, 1);
  check_option_names(L, 2, {"method", "options"});
  const std::string method = opt_string_field(L, 2, "method", "banoff");
  nlohmann::json options;
  if (!lua_isnoneornil(L, 2)) {
    lua_getfield(L, 2, "options");
    if (!lua_isnil(L, -1)) options = lua_to_json(L, -1, "options.options");
    lua_pop(L, 1);
  }
  const LoadedPlugin& folder = PluginRegistry::instance().require(FRUGAL_KIND_FOLDER, method);
  FoldedModel f = fold_model(folder, m.graph, options);
  push_model(L, std::move(f.graph), m.origin + " (folded by " + method + ")");
  push_record(L, f.report, Record::FoldReport);
  return 2;
}

const LuaBinding kFunctions[] = {{"fold", l_fold}, {nullptr, nullptr}};

}  // namespace

void open_lua_fold(lua_State* L, int module_index) {
  register_bindings(L, module_index, kFunctions, "frugal.");
}

}  // namespace frugal
