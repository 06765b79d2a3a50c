#include "lua/lua_gate.h"

#include "frugal/error.h"
#include "gating/gate_calibrate.h"
#include "lua/lua_binding.h"
#include "lua/lua_json.h"
#include "lua/lua_model.h"
#include "lua/lua_options.h"
#include "lua/lua_tensor.h"
#include "tensor/strided_tensor.h"

namespace frugal {

namespace {

std::vector<std::string> opt_string_list(lua_State* L, int idx, const char* field) {
  std::vector<std::string> out;
  if (lua_isnoneornil(L, idx)) return out;
  lua_getfield(L, idx, field);
  if (!lua_isnil(L, -1)) {
    if (!lua_istable(L, -1)) luaL_error(L, "option '%s' must be a list of strings", field);
    const lua_Integer n = luaL_len(L, -1);
    for (lua_Integer i = 1; i <= n; ++i) {
      lua_rawgeti(L, -1, i);
      if (lua_type(L, -1) != LUA_TSTRING) luaL_error(L, "option '%s'[%d] must be a string", field, int(i));
      out.push_back(lua_tostring(L, -1));
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 1);
  return out;
}

int l_gate(lua_State* L) {
  const LuaModel& m = check_model(L, 1);
  check_option_names(L, 2,
                     {"activity", "layers", "every", "seed", "threshold", "input", "batch", "executor"});
  GateOptions o;
  o.activity = opt_number_field(L, 2, "activity", 0.5);
  o.layers = opt_string_list(L, 2, "layers");
  o.every = opt_integer_field(L, 2, "every", 1);
  o.seed = uint64_t(opt_integer_field(L, 2, "seed", 0));
  o.threshold = float(opt_number_field(L, 2, "threshold", 0.5));
  o.batch = opt_integer_field(L, 2, "batch", 8);
  o.executor = opt_string_field(L, 2, "executor", "cpu");
  if (o.batch < 1) luaL_error(L, "option 'batch' must be >= 1");
  if (!lua_isnoneornil(L, 2)) {
    lua_getfield(L, 2, "input");
    if (!lua_isnil(L, -1)) o.calibration = check_tensor(L, -1).to_dense();
    lua_pop(L, 1);
  }
  GateResult r = make_gated_model(m.graph, o);
  push_model(L, std::move(r.model), m.origin + " (gated, activity " + std::to_string(o.activity) + ")");
  nlohmann::json report = {{"gated", nlohmann::json::array()}, {"skipped", nlohmann::json::array()}};
  for (const GatedLayerReport& g : r.gated)
    report["gated"].push_back({{"conv", g.conv}, {"channels", g.channels}, {"activity", g.activity}});
  for (const GateSite& s : r.skipped) report["skipped"].push_back({{"conv", s.conv}, {"reason", s.reason}});
  push_json(L, report);
  return 2;
}

const LuaBinding kFunctions[] = {{"gate", l_gate}, {nullptr, nullptr}};

}  // namespace

void open_lua_gate(lua_State* L, int module_index) {
  register_bindings(L, module_index, kFunctions, "frugal.");
}

}  // namespace frugal
