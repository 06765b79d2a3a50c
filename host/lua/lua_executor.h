// Executors in Lua: userdata of metatable "frugal.Executor" holding an
// ExecutorClient (a model prepared by an executor plugin, with its arena).
//
//   ex = frugal.executor(model, {executor = "cpu", threads = T, device = N, budget = "64MB"})
//        (also shader_dir = "DIR" for the vulkan executor; default the host's shader folder,
//        winograd = "auto" | "off" | "f23" | "f43": which 3x3 stride-1 convs run as Winograd,
//        weight_storage = "fp32" | "fp16": the vulkan executor's conv and Gemm weights as halves,
//        and conv_texel = "auto" | "on" | "off": its convs reading operands as texels)
//   ex:describe()          -> {device=, layers = {{name=, inputs=, ops=, ...}, ...},
//                              inputs = {{name=, shape=}}, outputs = ...}  (the plugin's JSON)
//   ex:layer_count()       -> number of schedulable layers
//   ex:layer_bytes(i, b)   -> {in_bytes=, out_bytes=, ws_bytes=}   layer i = 1..layer_count()
//   ex:set_budget(bytes)   the arena: exactly this many bytes (a number or "64MB")
//   ex:run(inputs [, {plan = PLAN}])  -> outputs, report
//   ex:time_layer(i, b, reps)         -> median, spread   (seconds per batch of b)
//   ex:name(), ex:model_origin(), tostring(ex)
//
//   outputs, report = frugal.run(model, plan_or_nil, inputs,
//                                {executor = "cpu", budget = "64MB" or bytes, threads = T})
//
// inputs: a FloatTensor for a one-input model, else a table input name -> tensor.
// outputs: a FloatTensor for a one-output model, else a table name -> tensor.
// report: the executor's, at least {peak_bytes=, seconds=, steps = {...}} (peak_bytes
// is measured in the arena). PLAN: a plan table (frugal.plan) or a plan JSON file
// path; nil runs the whole batch layer by layer. A plan is checked against the
// model first (its layer names and its request size), so a plan made for another
// model is refused with the names that differ.
// Budget in frugal.run: opts.budget, else the plan's budget_bytes, else none (the
// executor sizes its arena to exactly what the run needs). A budget that is too
// small is refused before anything runs, with the smallest budget that works.
#pragma once

#include <cstdint>
#include <lua.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "loader/executor_client.h"
#include "lua/lua_object.h"

namespace frugal {

constexpr const char* kExecutorMetatable = "frugal.Executor";
constexpr LuaObjectType kExecutorType{kExecutorMetatable, "executor"};

struct LuaExecutor {
  ExecutorClient client;
  std::string executor;      // the plugin's name ("cpu")
  std::string model_name;    // the graph's name
  std::string model_origin;  // where the model came from (file, zoo:NAME, ...)
  std::string model_hash;    // hash of the ONNX bytes it was created from (cost cache key)
  nlohmann::json options;    // what create() was given
};

// Executor choice from an options table at idx (absent/nil: defaults):
// executor (plugin name, "cpu"), threads, device, budget.
struct ExecutorSettings {
  std::string executor = "cpu";
  nlohmann::json options = nlohmann::json::object();  // {"threads":T,"device":N}
  std::optional<uint64_t> budget;
  bool consume = false;  // frugal.executor's option: the model is given away (closed)
};
ExecutorSettings parse_executor_settings(lua_State* L, int idx);

// Creates the executor for `model` (a frugal.Model at model_idx) and pushes it.
LuaExecutor& push_executor(lua_State* L, int model_idx, const ExecutorSettings& s);
LuaExecutor& check_executor(lua_State* L, int idx);
LuaExecutor* test_executor(lua_State* L, int idx);

void open_lua_executor(lua_State* L, int module_index);

}  // namespace frugal
