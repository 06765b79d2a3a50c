#include "lua/lua_zoo.h"

#include "frugal/error.h"
#include "lua/lua_binding.h"
#include "lua/lua_model.h"
#include "lua/lua_options.h"
#include "zoo/prune_channels.h"
#include "zoo/zoo.h"

namespace frugal {

namespace {

int l_zoo(lua_State* L) {
  std::string name = check_string_arg(L, 1);
  check_option_names(L, 2, {"seed", "prune"});
  int64_t seed = opt_integer_field(L, 2, "seed", 1);
  // prune = P: a variant with P% of the filters of each conv that can shrink alone dropped.
  const int64_t prune = opt_integer_field(L, 2, "prune", 0);
  if (prune < 0 || prune > 95)
    throw Error("option 'prune' must be a percentage in 0..95, got " + std::to_string(prune));
  Graph g = build_zoo_model(name, static_cast<uint64_t>(seed));
  if (prune == 0) {
    push_model(L, std::move(g), "zoo:" + name);
    return 1;
  }
  g = prune_channels(g, double(prune) / 100);
  g.name += "_pruned" + std::to_string(prune);
  push_model(L, std::move(g), "zoo:" + name + "@prune" + std::to_string(prune));
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
