// Models in Lua: userdata of metatable "frugal.Model" holding a Graph.
//
//   m = frugal.load("model.onnx")            m = frugal.zoo("resnet50", {seed = 1})
//   m:inputs(), m:outputs()   -> { {name=, shape={1, 3, "H", ...}, dtype="float32"}, ... }
//                                (symbolic dims appear as their name, or "?")
//   m:nodes()                 -> { {name=, op=, domain=, inputs={...}, outputs={...},
//                                   attributes={k = v}}, ... }  in topological order
//   m:node(name), m:tensor(name)  -> one such table, or nil when absent; a tensor's
//                                table has name, dtype, shape, initializer, and for
//                                numeric initializers `data` (a FloatTensor copy)
//                                and for integer ones also `values` (exact integers)
//   m:infer_shapes(batch) / m:infer_shapes{input = {1, 3, 224, 224}}   -> m
//   m:unknown_ops()           -> {"Foo (node 'x')", ...}
//   m:parameter_count()       -> learned parameters (weights, biases, BN scale and shift)
//   m:initializer_value_count() -> every float stored in initializers (also BN statistics)
//   m:macs()                  -> per-node list {name=, op=, macs=}, total, missing:
//                                MACs at the inferred shapes; a node that cannot be
//                                counted (unknown op, no shapes) has macs = nil and
//                                `why`, and is counted in `missing`
//   m:save(path), m:clone(), m:name(), m:origin(), m:metadata(), tostring(m)
//   frugal.random_input(m, batch, seed) -> a FloatTensor for a one-input model,
//                                else a table input name -> FloatTensor
#pragma once

#include <lua.hpp>
#include <memory>
#include <string>

#include "frugal/model/graph.h"
#include "lua/lua_object.h"

namespace frugal {

constexpr const char* kModelMetatable = "frugal.Model";
constexpr LuaObjectType kModelType{kModelMetatable, "model"};

struct LuaModel {
  Graph graph;
  std::string origin;  // file path, "zoo:NAME", or what produced it
};

void open_lua_model(lua_State* L, int module_index);

// Pushes a new model userdata (for bindings that produce models: zoo, fold...).
LuaModel& push_model(lua_State* L, Graph g, std::string origin);
LuaModel& check_model(lua_State* L, int idx);
// The model at idx, taken out of its userdata, which is closed from then on.
std::unique_ptr<LuaModel> take_model(lua_State* L, int idx);

}  // namespace frugal
