#include "lua/lua_model.h"

#include <algorithm>
#include <map>

#include "frugal/error.h"
#include "frugal/model/gating.h"
#include "frugal/model/macs.h"
#include "frugal/model/onnx_export.h"
#include "frugal/model/onnx_import.h"
#include "frugal/model/ops.h"
#include "frugal/model/shape_inference.h"
#include "lua/lua_binding.h"
#include "lua/lua_object.h"
#include "lua/lua_tensor.h"
#include "tensor/tensor_random.h"
#include "zoo/zoo.h"

namespace frugal {

namespace {

void set_string(lua_State* L, const char* key, const std::string& v) {
  lua_pushlstring(L, v.data(), v.size());
  lua_setfield(L, -2, key);
}

void push_shape(lua_State* L, const Shape& s) {
  lua_createtable(L, static_cast<int>(s.size()), 0);
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i].is_known())
      lua_pushinteger(L, s[i].value);
    else
      lua_pushstring(L, s[i].symbol.empty() ? "?" : s[i].symbol.c_str());
    lua_rawseti(L, -2, static_cast<lua_Integer>(i) + 1);
  }
}

// A float32 copy of a numeric initializer; false when the dtype has no such copy.
bool to_float_tensor(const TensorDesc& d, Tensor* out) {
  if (!d.has_shape || !shape_is_known(d.shape)) return false;
  std::vector<int64_t> dims = known_dims(d.shape);
  std::vector<float> values;
  if (d.dtype == DType::Float32 || d.dtype == DType::Float64) {
    values = d.as_float();
  } else if (d.dtype == DType::Int64 || d.dtype == DType::Int32) {
    for (int64_t v : d.as_int64()) values.push_back(static_cast<float>(v));
  } else {
    return false;
  }
  if (static_cast<int64_t>(values.size()) != checked_element_count(dims))
    throw Error("initializer '" + d.name + "' holds " + std::to_string(values.size()) + " values for shape " +
                shape_to_string(d.shape));
  out->dims = dims;
  out->data = std::move(values);
  return true;
}

void push_tensor_desc(lua_State* L, const TensorDesc& d) {
  lua_createtable(L, 0, 6);
  set_string(L, "name", d.name);
  set_string(L, "dtype", dtype_name(d.dtype));
  if (d.has_shape) {
    push_shape(L, d.shape);
    lua_setfield(L, -2, "shape");
  }
  lua_pushboolean(L, d.is_initializer);
  lua_setfield(L, -2, "initializer");
  if (!d.data.empty()) {
    Tensor t;
    if (to_float_tensor(d, &t)) {
      push_dense_tensor(L, std::move(t));
      lua_setfield(L, -2, "data");
    }
    if (d.dtype == DType::Int64 || d.dtype == DType::Int32) {
      push_integer_list(L, d.as_int64());
      lua_setfield(L, -2, "values");
    }
  }
}

void push_attribute_value(lua_State* L, const Attribute& a) {
  switch (a.kind) {
    case Attribute::Kind::Float:
      lua_pushnumber(L, a.f);
      break;
    case Attribute::Kind::Int:
      lua_pushinteger(L, a.i);
      break;
    case Attribute::Kind::String:
      lua_pushlstring(L, a.s.data(), a.s.size());
      break;
    case Attribute::Kind::Ints:
      push_integer_list(L, a.ints);
      break;
    case Attribute::Kind::Strings:
      push_string_list(L, a.strings);
      break;
    case Attribute::Kind::Floats:
      lua_createtable(L, static_cast<int>(a.floats.size()), 0);
      for (size_t i = 0; i < a.floats.size(); ++i) {
        lua_pushnumber(L, a.floats[i]);
        lua_rawseti(L, -2, static_cast<lua_Integer>(i) + 1);
      }
      break;
    case Attribute::Kind::Tensor:
      if (a.t)
        push_tensor_desc(L, *a.t);
      else
        lua_pushnil(L);
      break;
  }
}

void push_node(lua_State* L, const Node& n) {
  lua_createtable(L, 0, 6);
  set_string(L, "name", n.name);
  set_string(L, "op", n.op_type);
  set_string(L, "domain", n.domain);
  push_string_list(L, n.inputs);
  lua_setfield(L, -2, "inputs");
  push_string_list(L, n.outputs);
  lua_setfield(L, -2, "outputs");
  lua_createtable(L, 0, static_cast<int>(n.attributes.size()));
  for (const Attribute& a : n.attributes) {
    push_attribute_value(L, a);
    lua_setfield(L, -2, a.name.c_str());
  }
  lua_setfield(L, -2, "attributes");
}

void push_value_list(lua_State* L, const Graph& g, const std::vector<std::string>& names) {
  lua_createtable(L, static_cast<int>(names.size()), 0);
  for (size_t i = 0; i < names.size(); ++i) {
    lua_createtable(L, 0, 3);
    set_string(L, "name", names[i]);
    if (g.has_tensor(names[i])) {
      const TensorDesc& d = g.tensor(names[i]);
      set_string(L, "dtype", dtype_name(d.dtype));
      if (d.has_shape) {
        push_shape(L, d.shape);
        lua_setfield(L, -2, "shape");
      }
    }
    lua_rawseti(L, -2, static_cast<lua_Integer>(i) + 1);
  }
}

// ---- module functions -------------------------------------------------------

int l_load(lua_State* L) {
  std::string path = check_string_arg(L, 1);
  push_model(L, load_onnx_file(path), path);
  return 1;
}

// Input shape at `batch`: the first dimension becomes the batch, every other
// one must be known.
std::vector<int64_t> input_dims_at_batch(const TensorDesc& d, int64_t batch) {
  if (!d.has_shape || d.shape.empty())
    throw Error("input '" + d.name + "' has no shape in the model; give one with m:infer_shapes{" + d.name +
                " = {...}}");
  std::vector<int64_t> dims;
  for (size_t i = 0; i < d.shape.size(); ++i) {
    if (i == 0)
      dims.push_back(batch);
    else if (d.shape[i].is_known())
      dims.push_back(d.shape[i].value);
    else
      throw Error("input '" + d.name + "' has symbolic dimension " + std::to_string(i + 1) + " (" +
                  shape_to_string(d.shape) + "); fix it with m:infer_shapes{" + d.name + " = {...}}");
  }
  return dims;
}

int l_random_input(lua_State* L) {
  LuaModel& m = check_model(L, 1);
  lua_Integer batch = luaL_checkinteger(L, 2);
  if (batch < 1) throw Error("batch must be >= 1, got " + std::to_string(batch));
  int64_t seed = lua_isnoneornil(L, 3) ? 0 : check_nonnegative_integer(L, 3, "seed");
  const Graph& g = m.graph;
  if (g.inputs.empty()) throw Error("model '" + m.origin + "' has no inputs");
  if (g.inputs.size() > 1) lua_createtable(L, 0, static_cast<int>(g.inputs.size()));
  for (size_t i = 0; i < g.inputs.size(); ++i) {
    const TensorDesc& d = g.tensor(g.inputs[i]);
    if (d.dtype != DType::Float32)
      throw Error("input '" + d.name + "' is " + dtype_name(d.dtype) +
                  "; random_input makes float32 inputs only");
    const std::vector<int64_t> dims = input_dims_at_batch(d, batch);
    check_tensor_fits_memory(dims);
    Tensor t(dims);
    fill_uniform(t, static_cast<uint64_t>(seed) + i);
    push_dense_tensor(L, std::move(t));
    if (g.inputs.size() > 1) lua_setfield(L, -2, d.name.c_str());
  }
  return 1;
}

// ---- methods ----------------------------------------------------------------

int m_inputs(lua_State* L) {
  const Graph& g = check_model(L, 1).graph;
  push_value_list(L, g, g.inputs);
  return 1;
}

int m_outputs(lua_State* L) {
  const Graph& g = check_model(L, 1).graph;
  push_value_list(L, g, g.outputs);
  return 1;
}

int m_nodes(lua_State* L) {
  const Graph& g = check_model(L, 1).graph;
  lua_createtable(L, static_cast<int>(g.nodes.size()), 0);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    push_node(L, g.nodes[i]);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i) + 1);
  }
  return 1;
}

int m_node(lua_State* L) {
  const Graph& g = check_model(L, 1).graph;
  int i = g.node_index(check_string_arg(L, 2));
  if (i < 0)
    lua_pushnil(L);
  else
    push_node(L, g.nodes[static_cast<size_t>(i)]);
  return 1;
}

int m_tensor(lua_State* L) {
  const Graph& g = check_model(L, 1).graph;
  std::string name = check_string_arg(L, 2);
  if (!g.has_tensor(name))
    lua_pushnil(L);
  else
    push_tensor_desc(L, g.tensor(name));
  return 1;
}

int m_infer_shapes(lua_State* L) {
  LuaModel& m = check_model(L, 1);
  if (lua_istable(L, 2)) {
    std::map<std::string, std::vector<int64_t>> shapes;
    lua_pushnil(L);
    while (lua_next(L, 2)) {
      if (lua_type(L, -2) != LUA_TSTRING) throw Error("give shapes as {input_name = {d1, d2, ...}}");
      std::string name = lua_tostring(L, -2);
      if (!m.graph.has_tensor(name) ||
          std::find(m.graph.inputs.begin(), m.graph.inputs.end(), name) == m.graph.inputs.end())
        throw Error("model '" + m.origin + "' has no input named '" + name + "'");
      std::vector<int64_t> dims = check_integer_list(L, -1, name.c_str());
      for (int64_t d : dims)
        if (d < 0) throw Error("input '" + name + "': dimensions must be >= 0");
      checked_element_count(dims);
      shapes[name] = dims;
      lua_pop(L, 1);
    }
    infer_shapes(m.graph, shapes);
  } else {
    lua_Integer batch = luaL_checkinteger(L, 2);
    if (batch < 1) throw Error("batch must be >= 1, got " + std::to_string(batch));
    infer_shapes_for_batch(m.graph, batch);
  }
  lua_settop(L, 1);
  return 1;
}

int m_unknown_ops(lua_State* L) {
  push_string_list(L, unknown_op_nodes(check_model(L, 1).graph));
  return 1;
}

// Learned parameters: weights, biases, BatchNorm scale and shift, as
// torchvision counts them (zoo/zoo.h); not running statistics or constants.
int m_parameter_count(lua_State* L) {
  lua_pushinteger(L, torchvision_parameter_count(check_model(L, 1).graph));
  return 1;
}

// Every float value stored in initializers (also BN statistics and constants).
int m_initializer_value_count(lua_State* L) {
  lua_pushinteger(L, check_model(L, 1).graph.parameter_count());
  return 1;
}

// The kernel gates (frugal/model/gating.h) and the near misses with their reasons.
int m_gates(lua_State* L) {
  const GateAnalysis a = find_gates(check_model(L, 1).graph);
  lua_createtable(L, 0, 2);
  lua_createtable(L, static_cast<int>(a.gates.size()), 0);
  for (size_t i = 0; i < a.gates.size(); ++i) {
    const GateMatch& m = a.gates[i];
    lua_createtable(L, 0, 10);
    set_string(L, "mul", m.mul);
    set_string(L, "conv", m.conv);
    set_string(L, "input", m.input);
    set_string(L, "gate_conv", m.gate_conv);
    push_string_list(L, m.between);
    lua_setfield(L, -2, "between");
    push_string_list(L, m.gate_nodes);
    lua_setfield(L, -2, "gate_nodes");
    push_string_list(L, m.consumers);
    lua_setfield(L, -2, "consumers");
    lua_pushnumber(L, m.threshold);
    lua_setfield(L, -2, "threshold");
    lua_pushboolean(L, m.strict);
    lua_setfield(L, -2, "strict");
    lua_pushinteger(L, m.channels);
    lua_setfield(L, -2, "channels");
    lua_rawseti(L, -2, static_cast<lua_Integer>(i) + 1);
  }
  lua_setfield(L, -2, "gates");
  lua_createtable(L, static_cast<int>(a.near_misses.size()), 0);
  for (size_t i = 0; i < a.near_misses.size(); ++i) {
    lua_createtable(L, 0, 2);
    set_string(L, "mul", a.near_misses[i].mul);
    set_string(L, "reason", a.near_misses[i].reason);
    lua_rawseti(L, -2, static_cast<lua_Integer>(i) + 1);
  }
  lua_setfield(L, -2, "near_misses");
  return 1;
}

int m_macs(lua_State* L) {
  const Graph& g = check_model(L, 1).graph;
  lua_createtable(L, static_cast<int>(g.nodes.size()), 0);
  int64_t total = 0, missing = 0;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    lua_createtable(L, 0, 3);
    set_string(L, "name", n.name);
    set_string(L, "op", n.op_type);
    // A node whose count is unknowable (unknown op, shapes not inferred) gets
    // macs = nil and the reason, so one bad node does not hide the others.
    try {
      int64_t macs = node_macs(g, n);
      total += macs;
      lua_pushinteger(L, macs);
      lua_setfield(L, -2, "macs");
    } catch (const Error& e) {
      ++missing;
      set_string(L, "why", e.what());
    }
    lua_rawseti(L, -2, static_cast<lua_Integer>(i) + 1);
  }
  lua_pushinteger(L, total);
  lua_pushinteger(L, missing);
  return 3;
}

int m_save(lua_State* L) {
  save_onnx_file(check_model(L, 1).graph, check_string_arg(L, 2));
  lua_settop(L, 1);
  return 1;
}

int m_clone(lua_State* L) {
  LuaModel& m = check_model(L, 1);
  Graph copy = m.graph;
  push_model(L, std::move(copy), m.origin);
  return 1;
}

int m_name(lua_State* L) {
  lua_pushstring(L, check_model(L, 1).graph.name.c_str());
  return 1;
}

int m_origin(lua_State* L) {
  lua_pushstring(L, check_model(L, 1).origin.c_str());
  return 1;
}

int m_metadata(lua_State* L) {
  const Graph& g = check_model(L, 1).graph;
  lua_createtable(L, 0, 6);
  set_string(L, "name", g.name);
  lua_pushinteger(L, g.ir_version);
  lua_setfield(L, -2, "ir_version");
  set_string(L, "producer_name", g.producer_name);
  set_string(L, "producer_version", g.producer_version);
  set_string(L, "doc", g.model_doc);
  lua_createtable(L, static_cast<int>(g.opsets.size()), 0);
  for (size_t i = 0; i < g.opsets.size(); ++i) {
    lua_createtable(L, 0, 2);
    set_string(L, "domain", g.opsets[i].domain);
    lua_pushinteger(L, g.opsets[i].version);
    lua_setfield(L, -2, "version");
    lua_rawseti(L, -2, static_cast<lua_Integer>(i) + 1);
  }
  lua_setfield(L, -2, "opsets");
  return 1;
}

int m_tostring(lua_State* L) {
  const LuaModel& m = check_model(L, 1);
  std::string s = "frugal.Model '" + m.graph.name + "' from " + m.origin + " (" +
                  std::to_string(m.graph.nodes.size()) + " nodes, " + std::to_string(m.graph.inputs.size()) +
                  " inputs, " + std::to_string(m.graph.outputs.size()) + " outputs, " +
                  std::to_string(torchvision_parameter_count(m.graph)) + " parameters)";
  lua_pushlstring(L, s.data(), s.size());
  return 1;
}

const LuaBinding kModuleFunctions[] = {
    {"load", l_load}, {"random_input", l_random_input}, {nullptr, nullptr}};

const LuaBinding kMethods[] = {{"inputs", m_inputs},
                               {"outputs", m_outputs},
                               {"nodes", m_nodes},
                               {"node", m_node},
                               {"tensor", m_tensor},
                               {"infer_shapes", m_infer_shapes},
                               {"unknown_ops", m_unknown_ops},
                               {"parameter_count", m_parameter_count},
                               {"initializer_value_count", m_initializer_value_count},
                               {"macs", m_macs},
                               {"gates", m_gates},
                               {"save", m_save},
                               {"clone", m_clone},
                               {"name", m_name},
                               {"origin", m_origin},
                               {"metadata", m_metadata},
                               {nullptr, nullptr}};

}  // namespace

LuaModel& check_model(lua_State* L, int idx) { return check_object<LuaModel>(L, idx, kModelType); }

std::unique_ptr<LuaModel> take_model(lua_State* L, int idx) {
  return take_object<LuaModel>(L, idx, kModelType);
}

LuaModel& push_model(lua_State* L, Graph g, std::string origin) {
  return push_object<LuaModel>(L, kModelType, LuaModel{std::move(g), std::move(origin)});
}

void open_lua_model(lua_State* L, int module_index) {
  module_index = lua_absindex(L, module_index);
  static const LuaBinding kMetamethods[] = {{"__tostring", m_tostring, "tostring(model)"},
                                            {nullptr, nullptr}};
  register_object_type<LuaModel>(L, kModelType, kMethods, kMetamethods);
  register_bindings(L, module_index, kModuleFunctions, "frugal.");
}

}  // namespace frugal
