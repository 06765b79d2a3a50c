#include "lua/lua_predict.h"

#include <chrono>
#include <fstream>

#include "frugal/error.h"
#include "loader/plugin_registry.h"
#include "loader/predictor_client.h"
#include "lua/lua_binding.h"
#include "lua/lua_executor.h"
#include "lua/lua_json.h"
#include "lua/lua_model.h"
#include "lua/lua_options.h"
#include "lua/lua_records.h"
#include "profiler/cost_facts.h"
#include "profiler/cost_fit.h"

namespace frugal {

namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

nlohmann::json prediction_info(const nlohmann::json& table, double seconds) {
  int predicted = 0, measured = 0;
  for (const auto& l : table.at("layers"))
    for (const auto& s : l.value("source", nlohmann::json::array()))
      (s == "predicted" ? predicted : measured)++;
  return {{"warnings", table.value("warnings", nlohmann::json::array())},
          {"seconds", seconds},
          {"predicted", predicted},
          {"measured", measured}};
}

int l_predict(lua_State* L) {
  check_option_names(L, 3, {"model", "upto", "predictor", "fit", "executor", "threads", "device"});
  const std::string file = opt_string_field(L, 3, "model", "");
  if (file.empty()) throw Error("option 'model' (the predictor file) is required");
  const int64_t upto = opt_integer_field(L, 3, "upto", 16);
  if (upto < 1 || upto > 1024) throw Error("option 'upto' must be in 1..1024, got " + std::to_string(upto));
  const std::string name = opt_string_field(L, 3, "predictor", "xgb");
  const double t0 = now_seconds();
  const LuaModel& m = check_model(L, 1);
  LuaExecutor& ex = push_executor(L, 1, parse_executor_settings(L, 3));  // stays on the stack
  nlohmann::json table = unmeasured_table(ex.client, {ex.executor, ex.model_name, ex.model_hash}, int(upto));
  if (!lua_isnoneornil(L, 2)) merge_measured(table, lua_to_json(L, 2, "costs"));
  const LoadedPlugin& predictor = PluginRegistry::instance().require(FRUGAL_KIND_PREDICTOR, name);
  nlohmann::json out = predict_costs(predictor, m.graph, table, {{"upto", upto}, {"file", file}});
  const nlohmann::json info = prediction_info(out, now_seconds() - t0);
  // fit: per layer, the fitted time model through the measured and predicted per-batch times
  // (as frugal.profile's fit), so that plans do not chase the trees' steps.
  if (opt_bool_field(L, 3, "fit", false)) out = fit_cost_times(out, {"measured", "predicted"});
  push_record(L, out, Record::CostTable);
  push_json(L, info);
  return 2;
}

std::vector<TrainingExample> training_examples(lua_State* L, int idx) {
  luaL_checktype(L, idx, LUA_TTABLE);
  std::vector<TrainingExample> examples;
  const lua_Integer n = luaL_len(L, idx);
  for (lua_Integer i = 1; i <= n; ++i) {
    lua_geti(L, idx, i);
    const std::string where = "example " + std::to_string(i);
    if (!lua_istable(L, -1)) throw Error(where + " must be a table {model = m, costs = table}");
    lua_getfield(L, -1, "model");
    examples.push_back({&check_model(L, -1).graph, nullptr});  // the examples table keeps the model alive
    lua_getfield(L, -2, "costs");
    examples.back().costs = lua_to_json(L, -1, where + ".costs");
    lua_pop(L, 3);
  }
  return examples;
}

int l_train_predictor(lua_State* L) {
  check_option_names(L, 2, {"output", "predictor", "mode", "seed", "min_points"});
  const std::string output = opt_string_field(L, 2, "output", "");
  if (output.empty()) throw Error("option 'output' (the predictor file to write) is required");
  const std::string name = opt_string_field(L, 2, "predictor", "xgb");
  const nlohmann::json options = {{"mode", opt_string_field(L, 2, "mode", "forest")},
                                  {"seed", opt_integer_field(L, 2, "seed", 0)},
                                  {"min_points", opt_integer_field(L, 2, "min_points", 20)}};
  const std::vector<TrainingExample> examples = training_examples(L, 1);
  const LoadedPlugin& predictor = PluginRegistry::instance().require(FRUGAL_KIND_PREDICTOR, name);
  const std::string bytes = train_predictor(predictor, examples, options);
  std::ofstream out(output, std::ios::binary);
  if (!(out << bytes)) throw Error("cannot write '" + output + "'");
  nlohmann::json header = nlohmann::json::parse(bytes, nullptr, false);
  if (header.is_object()) header.erase("xgboost");
  push_json(L, header.is_object() ? header : nlohmann::json::object());
  return 1;
}

const LuaBinding kFunctions[] = {
    {"predict", l_predict}, {"train_predictor", l_train_predictor}, {nullptr, nullptr}};

}  // namespace

void open_lua_predict(lua_State* L, int module_index) {
  register_bindings(L, module_index, kFunctions, "frugal.");
}

}  // namespace frugal
