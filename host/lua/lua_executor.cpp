#include "lua/lua_executor.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <set>

#include "frugal/error.h"
#include "frugal/model/onnx_export.h"
#include "loader/plugin_call.h"
#include "loader/plugin_registry.h"
#include "lua/lua_binding.h"
#include "lua/lua_json.h"
#include "lua/lua_model.h"
#include "lua/lua_options.h"
#include "lua/lua_records.h"
#include "lua/lua_tensor.h"
#include "profiler/cost_cache.h"
#include "profiler/json_file.h"

namespace frugal {

namespace {

std::string join_some(const std::vector<std::string>& names, size_t max_shown = 8) {
  std::string s;
  for (size_t i = 0; i < names.size() && i < max_shown; ++i) s += (i ? ", '" : "'") + names[i] + "'";
  if (names.size() > max_shown) s += ", ... (" + std::to_string(names.size()) + " in all)";
  return s;
}

std::vector<std::string> layer_names(const nlohmann::json& description) {
  std::vector<std::string> names;
  if (description.contains("layers") && description["layers"].is_array())
    for (const auto& l : description["layers"])
      names.push_back(l.contains("name") && l["name"].is_string() ? l["name"].get<std::string>() : "?");
  return names;
}

// A plan made for another model names layers this one lacks (or misses some it
// has); a plan for another request size does not cover the input's samples.
// Both are refused here with the names, before the executor sees the plan.
void check_plan_for_model(const nlohmann::json& plan, const std::string& plan_origin, const LuaExecutor& ex,
                          int64_t batch) {
  if (!plan.is_object()) throw Error(plan_origin + " is not a plan (a JSON object with \"steps\")");
  if (!plan.contains("steps") || !plan["steps"].is_array())
    throw Error(plan_origin + " has no \"steps\" list: not a plan");
  const std::vector<std::string> names = layer_names(ex.client.describe());
  const std::set<std::string> known(names.begin(), names.end());
  std::set<std::string> used;
  const std::string made_for = plan.contains("model") && plan["model"].is_string()
                                   ? " '" + plan["model"].get<std::string>() + "'"
                                   : "";
  for (size_t i = 0; i < plan["steps"].size(); ++i) {
    const nlohmann::json& s = plan["steps"][i];
    if (!s.is_object() || !s.contains("layer"))
      throw Error(plan_origin + ": step " + std::to_string(i) + " has no \"layer\"");
    if (!s["layer"].is_string()) continue;  // an index: the executor checks its range
    const std::string layer = s["layer"].get<std::string>();
    if (!known.count(layer))
      throw Error(plan_origin + " was made for another model" + made_for + ": its layer '" + layer +
                  "' (step " + std::to_string(i) + ") is not a layer of model '" + ex.model_name +
                  "' on executor '" + ex.executor + "' (its layers: " + join_some(names) +
                  "); plan again from this model's cost table");
    used.insert(layer);
  }
  std::vector<std::string> missing;
  for (const std::string& n : names)
    if (!used.count(n)) missing.push_back(n);
  if (!missing.empty() && !used.empty())
    throw Error(plan_origin + " does not run " + std::to_string(missing.size()) + " layer(s) of model '" +
                ex.model_name + "' (" + join_some(missing) + "): made for another model" + made_for +
                "? Plan again from this model's cost table");
  if (plan.contains("batch") && plan["batch"].is_number_integer() && plan["batch"].get<int64_t>() != batch)
    throw Error(plan_origin + " is for a request of " + plan["batch"].dump() + " samples, the input has " +
                std::to_string(batch));
}

// A run's inputs: contiguous tensors by reference to their storage (the Lua
// values stay on the stack for the call), others as C-order copies it holds.
class RunInputs {
 public:
  void add(const StridedTensor& t) {
    if (t.is_contiguous()) {
      refs_.push_back({&t.sizes, t.storage->data() + t.offset, size_t(t.numel())});
      return;
    }
    const Tensor& c = copies_.emplace_back(t.to_dense());
    refs_.push_back({&c.dims, c.data.data(), c.data.size()});
  }
  const std::vector<TensorRef>& refs() const { return refs_; }

 private:
  std::vector<TensorRef> refs_;
  std::deque<Tensor> copies_;  // a deque: earlier copies stay where refs_ point
};

void gather_inputs(lua_State* L, int idx, const LuaExecutor& ex, RunInputs& inputs) {
  const std::vector<std::string> names = ex.client.input_names();
  if (is_object(L, idx, kTensorType)) {
    if (names.size() != 1)
      throw Error("model '" + ex.model_name + "' has " + std::to_string(names.size()) + " inputs (" +
                  join_some(names) + "): give a table input name -> tensor");
    inputs.add(check_tensor(L, idx));
    return;
  }
  if (!lua_istable(L, idx))
    throw Error("inputs must be a tensor or a table input name -> tensor, got " +
                std::string(luaL_typename(L, idx)));
  idx = lua_absindex(L, idx);
  for (const std::string& n : names) {
    lua_getfield(L, idx, n.c_str());
    if (!is_object(L, -1, kTensorType))
      throw Error("inputs['" + n + "'] is missing or not a tensor (model inputs: " + join_some(names) + ")");
    inputs.add(check_tensor(L, -1));  // the table holds it through the call
    lua_pop(L, 1);
  }
  lua_pushnil(L);
  while (lua_next(L, idx) != 0) {
    const std::string key =
        lua_type(L, -2) == LUA_TSTRING ? lua_tostring(L, -2) : std::string("(non-string key)");
    lua_pop(L, 1);
    if (std::find(names.begin(), names.end(), key) == names.end())
      throw Error("inputs has '" + key + "', which is not an input of model '" + ex.model_name +
                  "' (inputs: " + join_some(names) + ")");
  }
}

// The plan argument: nil, a plan table or a plan file. Sets *origin for messages.
nlohmann::json plan_argument(lua_State* L, int idx, std::string* origin) {
  if (lua_isnoneornil(L, idx)) return nullptr;
  if (lua_type(L, idx) == LUA_TSTRING) {
    *origin = "plan file '" + std::string(lua_tostring(L, idx)) + "'";
    return read_json_file(lua_tostring(L, idx));
  }
  *origin = "the plan";
  return lua_to_json(L, idx, "plan");
}

// Runs, pushes outputs and the report (2 values).
int run_and_push(lua_State* L, LuaExecutor& ex, int inputs_idx, const nlohmann::json& plan,
                 const std::string& plan_origin, bool budget_was_set) {
  RunInputs run_inputs;
  gather_inputs(L, inputs_idx, ex, run_inputs);
  const std::vector<TensorRef>& inputs = run_inputs.refs();
  const int64_t batch = inputs.empty() || inputs[0].dims->empty() ? 0 : (*inputs[0].dims)[0];
  if (!plan.is_null()) check_plan_for_model(plan, plan_origin, ex, batch);
  std::vector<Tensor> outputs;
  std::string report;
  try {
    report = ex.client.run_text(plan, inputs, outputs);
  } catch (const PluginCallError& e) {
    if (e.status != FRUGAL_ERR_BUDGET) throw;
    if (!plan.is_null()) throw Error("the budget is too small for " + plan_origin + ": " + e.what());
    throw Error("the budget is too small for a whole-batch run of " + std::to_string(batch) + " sample" +
                (batch == 1 ? "" : "s") + " (the executor says: " + e.what() + ")" +
                (budget_was_set
                     ? ". Without a budget the arena is sized to exactly what the whole batch needs; "
                       "a smaller budget needs a plan (frugal plan, frugal workflow)"
                     : ""));
  }
  const std::vector<std::string> names = ex.client.output_names();
  if (outputs.size() == 1) {
    push_dense_tensor(L, std::move(outputs[0]));
  } else {
    lua_createtable(L, 0, static_cast<int>(outputs.size()));
    for (size_t i = 0; i < outputs.size(); ++i) {
      push_dense_tensor(L, std::move(outputs[i]));
      lua_setfield(L, -2, names.at(i).c_str());
    }
  }
  push_record_text(L, report, plugin_label(ex.client.plugin()) + ": the run report it returned",
                   Record::RunReport);
  return 2;
}

int layer_index_arg(lua_State* L, int idx, const LuaExecutor& ex) {
  const lua_Integer i = luaL_checkinteger(L, idx);
  const size_t n = layer_names(ex.client.describe()).size();
  if (i < 1 || static_cast<size_t>(i) > n)
    throw Error("layer index " + std::to_string(i) + " is out of range: the executor has " +
                std::to_string(n) + " layers (1.." + std::to_string(n) + ")");
  return static_cast<int>(i - 1);
}

int batch_arg(lua_State* L, int idx) {
  const lua_Integer b = luaL_checkinteger(L, idx);
  if (b < 1 || b > (1 << 20)) throw Error("batch must be in 1..1048576, got " + std::to_string(b));
  return static_cast<int>(b);
}

// ---- module functions -------------------------------------------------------

int l_executor(lua_State* L) {
  check_model(L, 1);
  check_option_names(L, 2,
                     {"executor", "threads", "device", "budget", "shader_dir", "winograd", "weight_storage",
                      "conv_texel", "gate_passes", "gate_threshold", "gate_activity", "time_layer",
                      "schedule", "residual_add", "se_scale", "cache_bytes", "consume"});
  ExecutorSettings s = parse_executor_settings(L, 2);
  s.consume = opt_bool_field(L, 2, "consume", false);
  push_executor(L, 1, s);
  return 1;
}

int l_run(lua_State* L) {
  check_model(L, 1);
  check_option_names(L, 4,
                     {"executor", "threads", "device", "budget", "shader_dir", "winograd", "weight_storage",
                      "conv_texel", "gate_passes", "gate_threshold", "gate_activity", "time_layer",
                      "schedule", "residual_add", "se_scale", "cache_bytes"});
  const ExecutorSettings s = parse_executor_settings(L, 4);
  std::string plan_origin;
  const nlohmann::json plan = plan_argument(L, 2, &plan_origin);
  LuaExecutor& ex = push_executor(L, 1, s);  // stays on the stack: __gc frees it
  bool budget_set = s.budget.has_value();
  if (!budget_set && plan.is_object() && plan.contains("budget_bytes") &&
      plan["budget_bytes"].is_number_integer() && plan["budget_bytes"].get<int64_t>() > 0) {
    ex.client.set_budget(plan["budget_bytes"].get<uint64_t>());
    budget_set = true;
  }
  return run_and_push(L, ex, 3, plan, plan_origin, budget_set);
}

// ---- methods ----------------------------------------------------------------

int e_describe(lua_State* L) {
  push_json(L, check_executor(L, 1).client.describe());
  return 1;
}

int e_layer_count(lua_State* L) {
  lua_pushinteger(L, static_cast<lua_Integer>(layer_names(check_executor(L, 1).client.describe()).size()));
  return 1;
}

int e_layer_bytes(lua_State* L) {
  LuaExecutor& ex = check_executor(L, 1);
  const LayerBytes b = ex.client.layer_bytes(layer_index_arg(L, 2, ex), batch_arg(L, 3));
  lua_createtable(L, 0, 3);
  lua_pushinteger(L, static_cast<lua_Integer>(b.in_bytes));
  lua_setfield(L, -2, "in_bytes");
  lua_pushinteger(L, static_cast<lua_Integer>(b.out_bytes));
  lua_setfield(L, -2, "out_bytes");
  lua_pushinteger(L, static_cast<lua_Integer>(b.ws_bytes));
  lua_setfield(L, -2, "ws_bytes");
  return 1;
}

int e_set_budget(lua_State* L) {
  check_executor(L, 1).client.set_budget(check_bytes_value(L, 2, "budget"));
  return 0;
}

int e_run(lua_State* L) {
  LuaExecutor& ex = check_executor(L, 1);
  check_option_names(L, 3, {"plan"});
  std::string plan_origin;
  nlohmann::json plan;
  if (!lua_isnoneornil(L, 3)) {
    lua_getfield(L, 3, "plan");
    plan = plan_argument(L, lua_gettop(L), &plan_origin);
    lua_pop(L, 1);
  }
  return run_and_push(L, ex, 2, plan, plan_origin, true);
}

int e_time_layer(lua_State* L) {
  LuaExecutor& ex = check_executor(L, 1);
  const int layer = layer_index_arg(L, 2, ex);
  const int batch = batch_arg(L, 3);
  const lua_Integer reps = luaL_optinteger(L, 4, 5);
  if (reps < 1 || reps > 100000) throw Error("repeats must be in 1..100000, got " + std::to_string(reps));
  const LayerTiming t = ex.client.time_layer(layer, batch, static_cast<int>(reps));
  lua_pushnumber(L, t.median_seconds);
  lua_pushnumber(L, t.spread_seconds);
  return 2;
}

int e_name(lua_State* L) {
  const std::string& n = check_executor(L, 1).executor;
  lua_pushlstring(L, n.data(), n.size());
  return 1;
}

int e_model_origin(lua_State* L) {
  const std::string& n = check_executor(L, 1).model_origin;
  lua_pushlstring(L, n.data(), n.size());
  return 1;
}

int e_tostring(lua_State* L) {
  const LuaExecutor& ex = check_executor(L, 1);
  const nlohmann::json& d = ex.client.describe();
  std::string s = "frugal.Executor '" + ex.executor + "'";
  if (d.contains("device") && d["device"].is_string()) s += " on " + d["device"].get<std::string>();
  s += " for model '" + ex.model_name + "' from " + ex.model_origin;
  lua_pushlstring(L, s.data(), s.size());
  return 1;
}

const LuaBinding kFunctions[] = {{"executor", l_executor}, {"run", l_run}, {nullptr, nullptr}};

const LuaBinding kMethods[] = {{"describe", e_describe},
                               {"layer_count", e_layer_count},
                               {"layer_bytes", e_layer_bytes},
                               {"set_budget", e_set_budget},
                               {"run", e_run},
                               {"time_layer", e_time_layer},
                               {"name", e_name},
                               {"model_origin", e_model_origin},
                               {nullptr, nullptr}};

// Option `name` of the table at idx, a string passed to the executor as it is
// (the executor checks its value; `values` lists them for the type error).
void string_option(lua_State* L, int idx, const char* name, const char* values, nlohmann::json& options) {
  lua_getfield(L, idx, name);
  if (lua_type(L, -1) == LUA_TSTRING)
    options[name] = std::string(lua_tostring(L, -1));
  else if (!lua_isnil(L, -1))
    throw Error(std::string("option '") + name + "' must be a string (" + values + ")");
  lua_pop(L, 1);
}

}  // namespace

ExecutorSettings parse_executor_settings(lua_State* L, int idx) {
  ExecutorSettings s;
  if (lua_isnoneornil(L, idx)) return s;
  if (!lua_istable(L, idx)) throw Error("options must be a table, got " + std::string(luaL_typename(L, idx)));
  idx = lua_absindex(L, idx);
  lua_getfield(L, idx, "executor");
  if (!lua_isnil(L, -1)) {
    if (lua_type(L, -1) != LUA_TSTRING)
      throw Error("option 'executor' must be a plugin name such as \"cpu\"");
    s.executor = lua_tostring(L, -1);
  }
  lua_pop(L, 1);
  const int64_t threads = opt_integer_field(L, idx, "threads", 0);
  if (threads < 0) throw Error("option 'threads' must be >= 1, got " + std::to_string(threads));
  if (threads > 0) s.options["threads"] = threads;
  lua_getfield(L, idx, "device");
  if (lua_isinteger(L, -1))
    s.options["device"] = static_cast<int64_t>(lua_tointeger(L, -1));
  else if (lua_type(L, -1) == LUA_TSTRING)
    s.options["device"] = std::string(lua_tostring(L, -1));
  else if (!lua_isnil(L, -1))
    throw Error("option 'device' must be a device index or name");
  lua_pop(L, 1);
  lua_getfield(L, idx, "shader_dir");  // else the host's (executor_options_with_host_paths)
  if (lua_type(L, -1) == LUA_TSTRING)
    s.options["shader_dir"] = std::string(lua_tostring(L, -1));
  else if (!lua_isnil(L, -1))
    throw Error("option 'shader_dir' must be a folder name (a string)");
  lua_pop(L, 1);
  // 3x3 convs: "auto", "off" (both executors), "f23", "f43" (vulkan)
  string_option(L, idx, "winograd", "\"auto\", \"off\", \"f23\" or \"f43\"", s.options);
  // the vulkan executor's conv and Gemm weights as float32 or halves (docs/VULKAN.md, "fp16 weights")
  string_option(L, idx, "weight_storage", "\"fp32\" or \"fp16\"", s.options);
  // the vulkan executor's convs reading their operands as texels (docs/VULKAN.md, "Texel operands")
  string_option(L, idx, "conv_texel", "\"auto\", \"on\" or \"off\"", s.options);
  // the vulkan executor's gate passes: an invocation per plane or kernel, or a work group each
  // (docs/GATING.md)
  string_option(L, idx, "gate_passes", "\"auto\", \"flat\" or \"groups\"", s.options);
  // the CPU executor's cache state when timing a layer (docs/COSTS.md)
  string_option(L, idx, "time_layer", "\"cold\", \"cold_inputs\" or \"warm\"", s.options);
  // the CPU executor's run without a plan, and its fusions (plugins/cpu/README.md, "Options")
  string_option(L, idx, "schedule", "\"cache\" or \"whole\"", s.options);
  string_option(L, idx, "residual_add", "\"fused\" or \"separate\"", s.options);
  string_option(L, idx, "se_scale", "\"fused\" or \"separate\"", s.options);
  lua_getfield(L, idx, "gate_threshold");  // docs/GATING.md: replaces every gate's threshold
  if (lua_isnumber(L, -1) && lua_tonumber(L, -1) >= 0 && lua_tonumber(L, -1) <= 1)
    s.options["gate_threshold"] = static_cast<double>(lua_tonumber(L, -1));
  else if (!lua_isnil(L, -1))
    throw Error("option 'gate_threshold' must be a number in [0, 1]");
  lua_pop(L, 1);
  // docs/GATING.md: time_layer's stated activity, a number or {layer = number}
  // (the executor checks the values).
  lua_getfield(L, idx, "gate_activity");
  if (lua_isnumber(L, -1) || lua_istable(L, -1))
    s.options["gate_activity"] = lua_to_json(L, -1, "option 'gate_activity'");
  else if (!lua_isnil(L, -1))
    throw Error("option 'gate_activity' must be a number in [0, 1] or a table {layer = number}");
  lua_pop(L, 1);
  uint64_t cache_bytes = 0;  // the cpu executor's cache schedule's limit per step
  if (opt_bytes_field(L, idx, "cache_bytes", &cache_bytes)) s.options["cache_bytes"] = cache_bytes;
  uint64_t budget = 0;
  if (opt_bytes_field(L, idx, "budget", &budget)) s.budget = budget;
  return s;
}

LuaExecutor& push_executor(lua_State* L, int model_idx, const ExecutorSettings& s) {
  const LuaModel& m = check_model(L, model_idx);
  PluginRegistry& registry = PluginRegistry::instance();
  const LoadedPlugin& plugin = registry.require(FRUGAL_KIND_EXECUTOR, s.executor);
  const std::string hash = model_fingerprint(m.graph);  // the cost cache's key
  const std::string name = m.graph.name, origin = m.origin;
  const nlohmann::json options = s.options.empty() ? nlohmann::json() : s.options;
  // Consumed: the model's weights are freed as the executor takes them (ExecutorClient).
  const std::unique_ptr<LuaModel> taken = s.consume ? take_model(L, model_idx) : nullptr;
  LuaExecutor& ex =
      push_object<LuaExecutor>(L, kExecutorType,
                               LuaExecutor{taken ? ExecutorClient(plugin, std::move(taken->graph), options)
                                                 : ExecutorClient(plugin, m.graph, options),
                                           s.executor, name, origin, hash, s.options});
  if (s.budget) ex.client.set_budget(*s.budget);
  return ex;
}

LuaExecutor* test_executor(lua_State* L, int idx) { return test_object<LuaExecutor>(L, idx, kExecutorType); }

LuaExecutor& check_executor(lua_State* L, int idx) {
  return check_object<LuaExecutor>(L, idx, kExecutorType);
}

void open_lua_executor(lua_State* L, int module_index) {
  module_index = lua_absindex(L, module_index);
  static const LuaBinding kMetamethods[] = {{"__tostring", e_tostring, "tostring(executor)"},
                                            {nullptr, nullptr}};
  register_object_type<LuaExecutor>(L, kExecutorType, kMethods, kMetamethods);
  register_bindings(L, module_index, kFunctions, "frugal.");
}

}  // namespace frugal
