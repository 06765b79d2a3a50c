#include "lua/lua_zoo.h"

#include "lua/lua_binding.h"
#include "lua/lua_model.h"
#include "lua/lua_options.h"
#include "zoo/zoo.h"

namespace frugal {

namespace {

int l_zoo(lua_State* L) {
  std::string name = check_string_arg(L, 1);
  check_option_names(L, 2, {"seed"});
  int64_t seed = opt_integer_field(L, 2, "seed", 1);
  push_model(L, build_zoo_model(name, static_cast<uint64_t>(seed)), "zoo:" + name);
  return 1;
}

int l_zoo_names(lua_State* L) {
  push_string_list(L, zoo_names());
  return 1;
}

const LuaBinding kFunctions[] = {{"zoo", l_zoo}, {"zoo_names", l_zoo_names}, {nullptr, nullptr}};

}  // namespace

void open_lua_zoo(lua_State* L, int module_index) {
  register_bindings(L, module_index, kFunctions, "frugal.");
}

}  // namespace frugal
