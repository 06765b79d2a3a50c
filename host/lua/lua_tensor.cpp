#include "lua/lua_tensor.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include "lua/lua_options.h"
#include "tensor/npy.h"
#include "tensor/tensor_random.h"

namespace frugal {

namespace {

constexpr int kMaxRank = 32;  // also bounds recursion on self-referencing tables

// "2.5", "string", "nil": what a script passed where an integer was due.
std::string describe_value(lua_State* L, int idx) {
  if (lua_type(L, idx) != LUA_TNUMBER) return luaL_typename(L, idx);
  lua_pushvalue(L, idx);
  std::string s = lua_tostring(L, -1);  // e.g. 2.5 or 1e+30 (no int64 value)
  lua_pop(L, 1);
  return s;
}

float check_value(lua_State* L, int idx) {
  if (lua_type(L, idx) != LUA_TNUMBER)
    throw Error(std::string("value must be a number, got ") + luaL_typename(L, idx));
  return static_cast<float>(lua_tonumber(L, idx));
}

bool is_size_table(lua_State* L, int idx) {
  if (!lua_istable(L, idx) || !lua_getmetatable(L, idx)) return false;
  luaL_getmetatable(L, kSizeMetatable);
  const bool same = lua_rawequal(L, -1, -2);
  lua_pop(L, 2);
  return same;
}

void check_sizes(const std::vector<int64_t>& dims) {
  if (dims.size() > kMaxRank) throw Error("at most " + std::to_string(kMaxRank) + " dimensions");
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] < 0)
      throw Error("size " + std::to_string(i + 1) + " is " + std::to_string(dims[i]) +
                  "; sizes must be >= 0");
}

// Sizes as numbers from `first` on, or as one table (or frugal.Size) there.
std::vector<int64_t> sizes_from_args(lua_State* L, int first, const char* fn) {
  std::vector<int64_t> dims;
  const int top = lua_gettop(L);
  if (top >= first && lua_istable(L, first)) {
    if (top > first) throw Error(std::string("give sizes as numbers or as one table, e.g. ") + fn + "{2, 3}");
    dims = check_integer_list(L, first, "sizes");
  } else {
    for (int i = first; i <= top; ++i) {
      int ok = 0;
      const lua_Integer v = lua_tointegerx(L, i, &ok);
      if (!ok || lua_type(L, i) != LUA_TNUMBER)
        throw Error("size " + std::to_string(i - first + 1) + " must be an integer, got " +
                    describe_value(L, i));
      dims.push_back(v);
    }
  }
  if (dims.empty()) throw Error(std::string("give the sizes, e.g. ") + fn + "(2, 3) or " + fn + "{2, 3}");
  check_sizes(dims);
  return dims;
}

// ---- tensors from nested tables of values -----------------------------------

std::string path_string(const std::vector<int64_t>& at) {
  std::string s;
  for (int64_t i : at) s += "[" + std::to_string(i) + "]";
  return s.empty() ? "the argument" : "element " + s;
}

// Shape of a nested table: follows the first element down.
void probe_shape(lua_State* L, int idx, std::vector<int64_t>* dims) {
  lua_pushvalue(L, idx);
  while (lua_istable(L, -1)) {
    if (dims->size() >= kMaxRank)
      throw Error("nested deeper than " + std::to_string(kMaxRank) +
                  " levels (a table that contains itself?)");
    const lua_Integer n = luaL_len(L, -1);
    dims->push_back(n);
    if (n == 0) break;
    lua_geti(L, -1, 1);
    lua_remove(L, -2);
  }
  lua_pop(L, 1);
}

// Keys other than 1..n would be silently lost: refuse them.
void check_sequence_keys(lua_State* L, int idx, lua_Integer n, const std::vector<int64_t>& at) {
  lua_Integer keys = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    ++keys;
    lua_pop(L, 1);
  }
  if (keys != n) throw Error(path_string(at) + " has keys other than 1.." + std::to_string(n));
}

void copy_nested(lua_State* L, int idx, const std::vector<int64_t>& dims, size_t depth,
                 std::vector<int64_t>* at, float** out) {
  idx = lua_absindex(L, idx);
  if (depth == dims.size()) {
    if (lua_type(L, idx) != LUA_TNUMBER)
      throw Error(path_string(*at) + " is a " + luaL_typename(L, idx) + ", expected a number" +
                  (lua_istable(L, idx) ? " (rows nest unevenly)" : ""));
    *(*out)++ = static_cast<float>(lua_tonumber(L, idx));
    return;
  }
  if (!lua_istable(L, idx))
    throw Error(path_string(*at) + " is a " + luaL_typename(L, idx) + ", expected a table of " +
                std::to_string(dims[depth]) + " entries (rows nest unevenly)");
  const lua_Integer n = luaL_len(L, idx);
  if (n != dims[depth])
    throw Error(path_string(*at) + " has " + std::to_string(n) + " entries, expected " +
                std::to_string(dims[depth]) + " (nested tables must be rectangular)");
  check_sequence_keys(L, idx, n, *at);
  for (lua_Integer i = 1; i <= n; ++i) {
    at->push_back(i);
    lua_geti(L, idx, i);
    copy_nested(L, -1, dims, depth + 1, at, out);
    lua_pop(L, 1);
    at->pop_back();
  }
}

void push_tensor_of_values(lua_State* L, int idx) {
  std::vector<int64_t> dims;
  probe_shape(L, idx, &dims);
  StridedTensor& t = push_new_tensor(L, dims);
  std::vector<int64_t> at;
  float* out = t.storage->data();
  copy_nested(L, idx, dims, 0, &at, &out);
}

// ---- module functions -------------------------------------------------------

// frugal.tensor(2, 3) and frugal.tensor(x:size()) make zeros of those sizes;
// frugal.tensor{{1, 2}, {3, 4}} holds those values.
int l_tensor(lua_State* L) {
  const int top = lua_gettop(L);
  if (top == 0)
    throw Error(
        "give sizes or values: frugal.tensor(2, 3), frugal.zeros{2, 3} or frugal.tensor{{1, 2}, {3, 4}}");
  if (test_tensor(L, 1)) throw Error("to copy a tensor use x:clone(); to share its values, x:view(...)");
  if (lua_type(L, 1) == LUA_TNUMBER || is_size_table(L, 1)) {
    push_new_tensor(L, sizes_from_args(L, 1, "frugal.tensor"));
    return 1;
  }
  if (!lua_istable(L, 1))
    throw Error(std::string("argument #1 must be sizes or a table of values, got ") + luaL_typename(L, 1));
  if (top > 1) throw Error("give one table of values, e.g. frugal.tensor{{1, 2}, {3, 4}}");
  push_tensor_of_values(L, 1);
  return 1;
}

int l_zeros(lua_State* L) {
  push_new_tensor(L, sizes_from_args(L, 1, "frugal.zeros"));
  return 1;
}

int l_ones(lua_State* L) {
  StridedTensor& t = push_new_tensor(L, sizes_from_args(L, 1, "frugal.ones"));
  std::fill(t.storage->begin(), t.storage->end(), 1.0f);
  return 1;
}

// frugal.load_npy(path [, {nonfinite = "error" | "warn" | "allow"}]): NaN or
// Inf in the file is an error naming it, unless the caller asks to load it
// anyway (with a warning on stderr, or silently).
int l_load_npy(lua_State* L) {
  const std::string path = check_string_arg(L, 1);
  check_option_names(L, 2, {"nonfinite"});
  const std::string policy = opt_string_field(L, 2, "nonfinite", "error");
  if (policy != "error" && policy != "warn" && policy != "allow")
    throw Error("load_npy: option nonfinite must be \"error\", \"warn\" or \"allow\", got \"" + policy +
                "\"");
  Tensor t = load_npy(path);
  if (const std::string bad = nonfinite_summary(t); !bad.empty() && policy != "allow") {
    if (policy == "error")
      throw Error("'" + path + "': " + bad +
                  "; inputs must be finite (load it anyway with nonfinite = \"warn\"; " +
                  "frugal run: --allow-nonfinite)");
    std::fprintf(stderr, "warning: '%s': %s (loaded anyway)\n", path.c_str(), bad.c_str());
  }
  push_dense_tensor(L, std::move(t));
  return 1;
}

int l_is_tensor(lua_State* L) {
  lua_pushboolean(L, is_object(L, 1, kTensorType));
  return 1;
}

// ---- element access ---------------------------------------------------------

// Storage index of the element at the indices in stack slots [first, first + count).
int64_t element_index(lua_State* L, const StridedTensor& t, int first, int count) {
  if (count != static_cast<int>(t.dim()))
    throw Error("got " + std::to_string(count) + " indices for a tensor of " + std::to_string(t.dim()) +
                " dimensions (size " + size_string(t.sizes) + ")");
  int64_t at = t.offset;
  for (int k = 0; k < count; ++k)
    at += index_from_lua(L, first + k, t.sizes[static_cast<size_t>(k)], static_cast<size_t>(k) + 1) *
          t.strides[static_cast<size_t>(k)];
  return at;
}

int m_get(lua_State* L) {
  const StridedTensor& t = check_tensor(L, 1);
  lua_pushnumber(L, t.at(element_index(L, t, 2, lua_gettop(L) - 1)));
  return 1;
}

int m_set(lua_State* L) {
  StridedTensor& t = check_tensor(L, 1);
  const int top = lua_gettop(L);
  if (top < 2) throw Error("usage: x:set(i, j, ..., value)");
  const float v = check_value(L, top);
  t.at(element_index(L, t, 2, top - 2)) = v;
  lua_settop(L, 1);
  return 1;
}

// x[...]: a number index selects along dimension 1; a table holds, per
// dimension, an index (selects), {first, last} or {i} (narrows) or {} (all).
// *scalar is set when every dimension was selected by a number.
StridedTensor index_view(lua_State* L, const StridedTensor& t, int key, bool* scalar) {
  if (lua_type(L, key) == LUA_TNUMBER) {
    *scalar = t.dim() == 1;
    if (t.dim() == 0) throw Error("a tensor of no dimensions has no index; use x:get()");
    return t.select(0, index_from_lua(L, key, t.sizes[0], 1));
  }
  const lua_Integer n = luaL_len(L, key);
  if (n > static_cast<lua_Integer>(t.dim()))
    throw Error(std::to_string(n) + " indices for a tensor of " + std::to_string(t.dim()) +
                " dimensions (size " + size_string(t.sizes) + ")");
  StridedTensor v = t;
  size_t d = 0;  // dimension of v the next entry applies to
  *scalar = n == static_cast<lua_Integer>(t.dim());
  for (lua_Integer k = 1; k <= n; ++k) {
    lua_geti(L, key, k);
    const size_t label = static_cast<size_t>(k);
    if (lua_type(L, -1) == LUA_TNUMBER) {
      v = v.select(d, index_from_lua(L, -1, v.sizes[d], label));
    } else if (lua_istable(L, -1)) {
      *scalar = false;
      const lua_Integer m = luaL_len(L, -1);
      if (m > 2)
        throw Error("index " + std::to_string(k) + ": a range is {first, last}, got " + std::to_string(m) +
                    " entries");
      int64_t first = 0, last = v.sizes[d] - 1;
      if (m >= 1) {
        lua_geti(L, -1, 1);
        first = last = index_from_lua(L, -1, v.sizes[d], label);
        lua_pop(L, 1);
      }
      if (m == 2) {
        lua_geti(L, -1, 2);
        last = index_from_lua(L, -1, v.sizes[d], label);
        lua_pop(L, 1);
      }
      if (last < first)
        throw Error("index " + std::to_string(k) + ": range {" + std::to_string(first + 1) + ", " +
                    std::to_string(last + 1) + "} is empty (last before first)");
      v = v.narrow(d++, first, last - first + 1);
    } else {
      throw Error("index " + std::to_string(k) + " must be an integer or a range {first, last}, got " +
                  luaL_typename(L, -1));
    }
    lua_pop(L, 1);
  }
  return v;
}

// Method names are looked up even on a closed tensor, so x:close() twice is harmless.
int m_index(lua_State* L) {
  const int key_type = lua_type(L, 2);
  if (key_type == LUA_TNUMBER || key_type == LUA_TTABLE) {
    bool scalar = false;
    StridedTensor v = index_view(L, check_tensor(L, 1), 2, &scalar);
    if (scalar)
      lua_pushnumber(L, v.at(v.offset));
    else
      push_tensor(L, std::move(v));
    return 1;
  }
  lua_getmetatable(L, 1);
  lua_getfield(L, -1, "__methods");
  lua_pushvalue(L, 2);
  lua_rawget(L, -2);
  return 1;
}

int m_newindex(lua_State* L) {
  const StridedTensor& t = check_tensor(L, 1);
  const int key_type = lua_type(L, 2);
  if (key_type != LUA_TNUMBER && key_type != LUA_TTABLE)
    throw Error("cannot set field '" + std::string(luaL_tolstring(L, 2, nullptr)) + "' of a tensor");
  bool scalar = false;
  StridedTensor target = index_view(L, t, 2, &scalar);
  if (const StridedTensor* src = test_tensor(L, 3)) {
    target.copy_from(*src);
    return 0;
  }
  const float v = check_value(L, 3);
  for_each_index(target, [&](int64_t i) { target.at(i) = v; });
  return 0;
}

int m_len(lua_State* L) {
  const StridedTensor& t = check_tensor(L, 1);
  if (t.dim() == 0) throw Error("a tensor of no dimensions has no length");
  lua_pushinteger(L, t.sizes[0]);
  return 1;
}

int m_tostring(lua_State* L) {
  const std::string s = format_tensor(check_tensor(L, 1));
  lua_pushlstring(L, s.data(), s.size());
  return 1;
}

// ---- shape and views --------------------------------------------------------

int m_size(lua_State* L) {
  const StridedTensor& t = check_tensor(L, 1);
  if (lua_isnoneornil(L, 2)) {
    push_size(L, t.sizes);
    return 1;
  }
  lua_pushinteger(L, t.sizes[dim_from_lua(L, 2, t)]);
  return 1;
}

int m_dim(lua_State* L) {
  lua_pushinteger(L, static_cast<lua_Integer>(check_tensor(L, 1).dim()));
  return 1;
}

int m_numel(lua_State* L) {
  lua_pushinteger(L, check_tensor(L, 1).numel());
  return 1;
}

int m_is_contiguous(lua_State* L) {
  lua_pushboolean(L, check_tensor(L, 1).is_contiguous());
  return 1;
}

int m_contiguous(lua_State* L) {
  const StridedTensor& t = check_tensor(L, 1);
  if (t.is_contiguous())
    lua_settop(L, 1);
  else
    push_tensor(L, t.clone());
  return 1;
}

int m_view(lua_State* L) {
  const StridedTensor& t = check_tensor(L, 1);
  push_tensor(L, t.view(sizes_from_args(L, 2, "x:view")));
  return 1;
}

// Shares the values when the tensor is contiguous, else copies (as PyTorch does).
int m_reshape(lua_State* L) {
  const StridedTensor& t = check_tensor(L, 1);
  const std::vector<int64_t> dims = sizes_from_args(L, 2, "x:reshape");
  push_tensor(L, t.is_contiguous() ? t.view(dims) : t.clone().view(dims));
  return 1;
}

int m_narrow(lua_State* L) {
  const StridedTensor& t = check_tensor(L, 1);
  const size_t d = dim_from_lua(L, 2, t);
  const int64_t first = index_from_lua(L, 3, t.sizes[d], d + 1);
  const lua_Integer length = luaL_checkinteger(L, 4);
  push_tensor(L, t.narrow(d, first, length));
  return 1;
}

int m_select(lua_State* L) {
  const StridedTensor& t = check_tensor(L, 1);
  const size_t d = dim_from_lua(L, 2, t);
  push_tensor(L, t.select(d, index_from_lua(L, 3, t.sizes[d], d + 1)));
  return 1;
}

// ---- values -----------------------------------------------------------------

int m_fill(lua_State* L) {
  StridedTensor& t = check_tensor(L, 1);
  const float v = check_value(L, 2);
  for_each_index(t, [&](int64_t i) { t.at(i) = v; });
  lua_settop(L, 1);
  return 1;
}

int m_zero(lua_State* L) {
  StridedTensor& t = check_tensor(L, 1);
  for_each_index(t, [&](int64_t i) { t.at(i) = 0.0f; });
  lua_settop(L, 1);
  return 1;
}

int m_copy(lua_State* L) {
  check_tensor(L, 1).copy_from(check_tensor(L, 2));
  lua_settop(L, 1);
  return 1;
}

int m_clone(lua_State* L) {
  push_tensor(L, check_tensor(L, 1).clone());
  return 1;
}

void push_nested(lua_State* L, const Tensor& t, size_t depth, size_t* pos) {
  if (depth == t.dims.size()) {
    lua_pushnumber(L, t.data[(*pos)++]);
    return;
  }
  const int64_t n = t.dims[depth];
  luaL_checkstack(L, 4, "tensor too deep");
  lua_createtable(L, static_cast<int>(std::min<int64_t>(n, 1 << 20)), 0);
  for (int64_t i = 1; i <= n; ++i) {
    push_nested(L, t, depth + 1, pos);
    lua_rawseti(L, -2, i);
  }
}

int m_totable(lua_State* L) {
  const Tensor dense = check_tensor(L, 1).to_dense();
  size_t pos = 0;
  push_nested(L, dense, 0, &pos);  // a tensor of no dimensions gives its one number
  return 1;
}

int m_random(lua_State* L) {
  StridedTensor& t = check_tensor(L, 1);
  const int64_t seed = lua_isnoneornil(L, 2) ? 0 : check_nonnegative_integer(L, 2, "seed");
  const std::string dist = lua_isnoneornil(L, 3) ? "uniform" : check_string_arg(L, 3);
  Tensor values(t.sizes);
  if (dist == "uniform")
    fill_uniform(values, static_cast<uint64_t>(seed));
  else if (dist == "normal")
    fill_normal(values, static_cast<uint64_t>(seed));
  else
    throw Error("distribution '" + dist + "' is unknown; use \"uniform\" ([-1, 1)) or \"normal\"");
  t.copy_from(StridedTensor::from_dense(std::move(values)));
  lua_settop(L, 1);
  return 1;
}

int m_save_npy(lua_State* L) {
  save_npy(check_tensor(L, 1).to_dense(), check_string_arg(L, 2));
  lua_settop(L, 1);
  return 1;
}

const LuaBinding kModuleFunctions[] = {{"tensor", l_tensor},       {"zeros", l_zeros},
                                       {"ones", l_ones},           {"load_npy", l_load_npy},
                                       {"is_tensor", l_is_tensor}, {nullptr, nullptr}};

const LuaBinding kMethods[] = {{"size", m_size},
                               {"dim", m_dim},
                               {"numel", m_numel},
                               {"nElement", m_numel},
                               {"is_contiguous", m_is_contiguous},
                               {"contiguous", m_contiguous},
                               {"view", m_view},
                               {"reshape", m_reshape},
                               {"narrow", m_narrow},
                               {"select", m_select},
                               {"get", m_get},
                               {"set", m_set},
                               {"fill", m_fill},
                               {"zero", m_zero},
                               {"copy", m_copy},
                               {"clone", m_clone},
                               {"totable", m_totable},
                               {"random", m_random},
                               {"save_npy", m_save_npy},
                               {nullptr, nullptr}};

const LuaBinding kMetamethods[] = {{"__index", m_index, "tensor[index]"},
                                   {"__newindex", m_newindex, "tensor[index] = value"},
                                   {"__len", m_len, "#tensor"},
                                   {"__tostring", m_tostring, "tostring(tensor)"},
                                   {nullptr, nullptr}};

// ---- frugal.Size --------------------------------------------------------------

int size_tostring(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  const std::vector<int64_t> sizes = check_integer_list(L, 1, "size");
  const std::string s = size_string(sizes);
  lua_pushlstring(L, s.data(), s.size());
  return 1;
}

int size_eq(lua_State* L) {
  lua_pushboolean(L, check_integer_list(L, 1, "size") == check_integer_list(L, 2, "size"));
  return 1;
}

const LuaBinding kSizeMetamethods[] = {
    {"__tostring", size_tostring, "tostring(size)"}, {"__eq", size_eq, "size == size"}, {nullptr, nullptr}};

}  // namespace

int64_t index_from_lua(lua_State* L, int idx, int64_t size, size_t dim) {
  int ok = 0;
  const lua_Integer i = lua_tointegerx(L, idx, &ok);
  if (!ok) throw Error("index " + std::to_string(dim) + " must be an integer, got " + describe_value(L, idx));
  const int64_t zero_based = i < 0 ? size + i : i - 1;
  if (i == 0 || zero_based < 0 || zero_based >= size)
    throw Error("index " + std::to_string(i) + " out of range for dimension " + std::to_string(dim) +
                " (size " + std::to_string(size) + ")");
  return zero_based;
}

size_t dim_from_lua(lua_State* L, int idx, const StridedTensor& t) {
  const lua_Integer k = luaL_checkinteger(L, idx);
  if (k < 1 || k > static_cast<lua_Integer>(t.dim()))
    throw Error("dimension " + std::to_string(k) + " out of range (tensor of size " + size_string(t.sizes) +
                " has " + std::to_string(t.dim()) + " dimensions)");
  return static_cast<size_t>(k - 1);
}

void check_tensor_fits_memory(const std::vector<int64_t>& dims) {
  const int64_t n = checked_element_count(dims);
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  const double machine = (pages > 0 && page > 0) ? static_cast<double>(pages) * page : 0;
  const double need = static_cast<double>(n) * sizeof(float);
  if (n > INT64_MAX / 4 || (machine > 0 && need > machine)) {
    char b[160];
    std::snprintf(b, sizeof b, " needs %.3g GB, more than this machine's %.3g GB of memory", need / 1e9,
                  machine / 1e9);
    throw Error("a float32 tensor of size " + size_string(dims) + b);
  }
}

StridedTensor* test_tensor(lua_State* L, int idx) { return test_object<StridedTensor>(L, idx, kTensorType); }

StridedTensor& check_tensor(lua_State* L, int idx) {
  return check_object<StridedTensor>(L, idx, kTensorType);
}

StridedTensor& push_tensor(lua_State* L, StridedTensor t) {
  return push_object<StridedTensor>(L, kTensorType, std::move(t));
}

StridedTensor& push_dense_tensor(lua_State* L, Tensor t) {
  return push_tensor(L, StridedTensor::from_dense(std::move(t)));
}

StridedTensor& push_new_tensor(lua_State* L, const std::vector<int64_t>& dims) {
  check_sizes(dims);
  check_tensor_fits_memory(dims);
  return push_tensor(L, StridedTensor::zeros(dims));
}

void push_size(lua_State* L, const std::vector<int64_t>& sizes) {
  push_integer_list(L, sizes);
  luaL_setmetatable(L, kSizeMetatable);
}

void open_lua_tensor(lua_State* L, int module_index) {
  module_index = lua_absindex(L, module_index);
  register_object_type<StridedTensor>(L, kTensorType, kMethods, kMetamethods);
  luaL_getmetatable(L, kTensorMetatable);
  register_bindings(L, -1, kTensorMathMetamethods, "");
  lua_getfield(L, -1, "__methods");
  register_bindings(L, -1, kTensorMathMethods, "tensor:");
  lua_pop(L, 2);
  luaL_newmetatable(L, kSizeMetatable);
  register_bindings(L, -1, kSizeMetamethods, "");
  lua_pop(L, 1);
  register_bindings(L, module_index, kModuleFunctions, "frugal.");
}

}  // namespace frugal
