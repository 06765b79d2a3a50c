#include "lua/lua_tensor.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "lua/lua_binding.h"
#include "tensor/npy.h"
#include "tensor/tensor_random.h"
#include "util/error.h"

namespace frugal {

namespace {

constexpr int kMaxRank = 32;  // also bounds recursion on self-referencing tables

std::string size_string(const std::vector<int64_t>& dims) {
  if (dims.empty()) return "(scalar)";
  std::string s;
  for (size_t i = 0; i < dims.size(); ++i) s += (i ? "x" : "") + std::to_string(dims[i]);
  return s;
}

// The userdata holds a Tensor*; __gc deletes it and leaves nullptr, so a script
// that calls __gc by hand gets an error on next use, not a dangling pointer.
int tensor_gc(lua_State* L) {
  auto** slot = static_cast<Tensor**>(luaL_checkudata(L, 1, kTensorMetatable));
  delete *slot;
  *slot = nullptr;
  return 0;
}

// Flat offset of the 1-based indices at stack slots [first, first + rank).
size_t offset_of(lua_State* L, const Tensor& t, int first, int count) {
  if (count != static_cast<int>(t.dims.size()))
    throw Error("got " + std::to_string(count) + " indices for a tensor of " + std::to_string(t.dims.size()) +
                " dimensions (size " + size_string(t.dims) + ")");
  size_t off = 0;
  for (int k = 0; k < count; ++k) {
    int ok = 0;
    lua_Integer i = lua_tointegerx(L, first + k, &ok);
    if (!ok)
      throw Error("index " + std::to_string(k + 1) + " must be an integer, got " +
                  (lua_type(L, first + k) == LUA_TNUMBER ? std::string(lua_tostring(L, first + k))
                                                         : std::string(luaL_typename(L, first + k))));
    if (i < 1 || i > t.dims[k])
      throw Error("index " + std::to_string(i) + " out of range for dimension " + std::to_string(k + 1) +
                  " (size " + std::to_string(t.dims[k]) + ")");
    off = off * static_cast<size_t>(t.dims[k]) + static_cast<size_t>(i - 1);
  }
  return off;
}

float check_value(lua_State* L, int idx) {
  if (lua_type(L, idx) != LUA_TNUMBER)
    throw Error(std::string("value must be a number, got ") + luaL_typename(L, idx));
  return static_cast<float>(lua_tonumber(L, idx));
}

std::vector<int64_t> sizes_from_args(lua_State* L, int first, const char* fn) {
  std::vector<int64_t> dims;
  int top = lua_gettop(L);
  if (top >= first && lua_istable(L, first)) {
    if (top > first) throw Error(std::string("give sizes as numbers or as one table, e.g. ") + fn + "{2, 3}");
    dims = check_integer_list(L, first, "sizes");
  } else {
    for (int i = first; i <= top; ++i) {
      int ok = 0;
      lua_Integer v = lua_tointegerx(L, i, &ok);
      if (!ok || lua_type(L, i) != LUA_TNUMBER) {
        std::string got = luaL_typename(L, i);
        if (lua_type(L, i) == LUA_TNUMBER) {
          lua_pushvalue(L, i);
          got = lua_tostring(L, -1);  // e.g. 2.5 or 1e+30 (no int64 value)
          lua_pop(L, 1);
        }
        throw Error("size " + std::to_string(i - first + 1) + " must be an integer, got " + got);
      }
      dims.push_back(v);
    }
  }
  if (dims.empty()) throw Error(std::string("give the sizes, e.g. ") + fn + "(2, 3) or " + fn + "{2, 3}");
  if (dims.size() > kMaxRank) throw Error("at most " + std::to_string(kMaxRank) + " dimensions");
  for (size_t i = 0; i < dims.size(); ++i)
    if (dims[i] < 0)
      throw Error("size " + std::to_string(i + 1) + " is " + std::to_string(dims[i]) +
                  "; sizes must be >= 0");
  return dims;
}

// ---- module functions -------------------------------------------------------

int l_tensor(lua_State* L) {
  push_new_tensor(L, sizes_from_args(L, 1, "frugal.tensor"));
  return 1;
}

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
    lua_Integer n = luaL_len(L, -1);
    dims->push_back(n);
    if (n == 0) break;
    lua_geti(L, -1, 1);
    lua_remove(L, -2);
  }
  lua_pop(L, 1);
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
  lua_Integer n = luaL_len(L, idx);
  if (n != dims[depth])
    throw Error(path_string(*at) + " has " + std::to_string(n) + " entries, expected " +
                std::to_string(dims[depth]) + " (nested tables must be rectangular)");
  // Keys other than 1..n would be silently lost: refuse them.
  lua_Integer keys = 0;
  lua_pushnil(L);
  while (lua_next(L, idx)) {
    ++keys;
    lua_pop(L, 1);
  }
  if (keys != n) throw Error(path_string(*at) + " has keys other than 1.." + std::to_string(n));
  for (lua_Integer i = 1; i <= n; ++i) {
    at->push_back(i);
    lua_geti(L, idx, i);
    copy_nested(L, -1, dims, depth + 1, at, out);
    lua_pop(L, 1);
    at->pop_back();
  }
}

int l_tensor_from_table(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_settop(L, 1);
  std::vector<int64_t> dims;
  probe_shape(L, 1, &dims);
  Tensor& t = push_new_tensor(L, dims);
  std::vector<int64_t> at;
  float* out = t.data.data();
  copy_nested(L, 1, dims, 0, &at, &out);
  return 1;
}

int l_load_npy(lua_State* L) {
  push_tensor(L, load_npy(check_string_arg(L, 1)));
  return 1;
}

int l_is_tensor(lua_State* L) {
  lua_pushboolean(L, test_tensor(L, 1) != nullptr);
  return 1;
}

// ---- methods ----------------------------------------------------------------

int m_size(lua_State* L) {
  Tensor& t = check_tensor(L, 1);
  if (lua_isnoneornil(L, 2)) {
    push_integer_list(L, t.dims);
    return 1;
  }
  lua_Integer k = luaL_checkinteger(L, 2);
  if (k < 1 || k > static_cast<lua_Integer>(t.dims.size()))
    throw Error("dimension " + std::to_string(k) + " out of range (tensor has " +
                std::to_string(t.dims.size()) + " dimensions)");
  lua_pushinteger(L, t.dims[k - 1]);
  return 1;
}

int m_dim(lua_State* L) {
  lua_pushinteger(L, static_cast<lua_Integer>(check_tensor(L, 1).dims.size()));
  return 1;
}

int m_numel(lua_State* L) {
  lua_pushinteger(L, static_cast<lua_Integer>(check_tensor(L, 1).data.size()));
  return 1;
}

int m_fill(lua_State* L) {
  Tensor& t = check_tensor(L, 1);
  float v = check_value(L, 2);
  std::fill(t.data.begin(), t.data.end(), v);
  lua_settop(L, 1);
  return 1;
}

int m_get(lua_State* L) {
  Tensor& t = check_tensor(L, 1);
  lua_pushnumber(L, t.data[offset_of(L, t, 2, lua_gettop(L) - 1)]);
  return 1;
}

int m_set(lua_State* L) {
  Tensor& t = check_tensor(L, 1);
  int top = lua_gettop(L);
  if (top < 2) throw Error("usage: t:set(i, j, ..., value)");
  float v = check_value(L, top);
  t.data[offset_of(L, t, 2, top - 2)] = v;
  lua_settop(L, 1);
  return 1;
}

void push_nested(lua_State* L, const Tensor& t, size_t depth, size_t* pos) {
  if (depth == t.dims.size()) {
    lua_pushnumber(L, t.data[(*pos)++]);
    return;
  }
  int64_t n = t.dims[depth];
  luaL_checkstack(L, 4, "tensor too deep");
  lua_createtable(L, static_cast<int>(std::min<int64_t>(n, 1 << 20)), 0);
  for (int64_t i = 1; i <= n; ++i) {
    push_nested(L, t, depth + 1, pos);
    lua_rawseti(L, -2, i);
  }
}

int m_totable(lua_State* L) {
  Tensor& t = check_tensor(L, 1);
  size_t pos = 0;
  if (t.dims.empty()) {
    lua_pushnumber(L, t.data.empty() ? 0.0 : t.data[0]);
    return 1;
  }
  push_nested(L, t, 0, &pos);
  return 1;
}

int m_random(lua_State* L) {
  Tensor& t = check_tensor(L, 1);
  int64_t seed = lua_isnoneornil(L, 2) ? 0 : check_nonnegative_integer(L, 2, "seed");
  std::string dist = lua_isnoneornil(L, 3) ? "uniform" : check_string_arg(L, 3);
  if (dist == "uniform")
    fill_uniform(t, static_cast<uint64_t>(seed));
  else if (dist == "normal")
    fill_normal(t, static_cast<uint64_t>(seed));
  else
    throw Error("distribution '" + dist + "' is unknown; use \"uniform\" ([-1, 1)) or \"normal\"");
  lua_settop(L, 1);
  return 1;
}

int m_clone(lua_State* L) {
  Tensor copy = check_tensor(L, 1);
  push_tensor(L, std::move(copy));
  return 1;
}

int m_reshape(lua_State* L) {
  const Tensor& t = check_tensor(L, 1);
  std::vector<int64_t> dims = sizes_from_args(L, 2, "t:reshape");
  int64_t n = checked_element_count(dims);
  if (n != static_cast<int64_t>(t.data.size()))
    throw Error("cannot reshape size " + size_string(t.dims) + " (" + std::to_string(t.data.size()) +
                " values) to " + size_string(dims) + " (" + std::to_string(n) + " values)");
  Tensor out;
  out.dims = dims;
  out.data = t.data;
  push_tensor(L, std::move(out));
  return 1;
}

int m_sum(lua_State* L) {
  const Tensor& t = check_tensor(L, 1);
  double s = 0;
  for (float v : t.data) s += v;
  lua_pushnumber(L, s);
  return 1;
}

int min_or_max(lua_State* L, bool want_max) {
  const Tensor& t = check_tensor(L, 1);
  if (t.data.empty()) throw Error("tensor of size " + size_string(t.dims) + " is empty");
  auto it = want_max ? std::max_element(t.data.begin(), t.data.end())
                     : std::min_element(t.data.begin(), t.data.end());
  lua_pushnumber(L, *it);
  return 1;
}
int m_min(lua_State* L) { return min_or_max(L, false); }
int m_max(lua_State* L) { return min_or_max(L, true); }

int m_max_abs_diff(lua_State* L) {
  const Tensor& a = check_tensor(L, 1);
  const Tensor& b = check_tensor(L, 2);
  if (a.dims != b.dims) throw Error("sizes differ: " + size_string(a.dims) + " vs " + size_string(b.dims));
  double m = 0;
  for (size_t i = 0; i < a.data.size(); ++i) {
    double d = std::fabs(static_cast<double>(a.data[i]) - b.data[i]);
    if (std::isnan(d)) {
      m = d;
      break;
    }
    m = std::max(m, d);
  }
  lua_pushnumber(L, m);
  return 1;
}

int m_save_npy(lua_State* L) {
  save_npy(check_tensor(L, 1), check_string_arg(L, 2));
  lua_settop(L, 1);
  return 1;
}

// t[i] for 1-D tensors; other keys look up methods.
int m_index(lua_State* L) {
  Tensor& t = check_tensor(L, 1);
  if (lua_type(L, 2) == LUA_TNUMBER) {
    if (t.dims.size() != 1)
      throw Error("t[i] works on 1-D tensors; this one has size " + size_string(t.dims) +
                  ", use t:get(i, j, ...)");
    lua_pushnumber(L, t.data[offset_of(L, t, 2, 1)]);
    return 1;
  }
  luaL_getmetatable(L, kTensorMetatable);
  lua_getfield(L, -1, "__methods");
  lua_pushvalue(L, 2);
  lua_rawget(L, -2);
  return 1;
}

int m_newindex(lua_State* L) {
  Tensor& t = check_tensor(L, 1);
  if (lua_type(L, 2) != LUA_TNUMBER)
    throw Error("cannot set field '" + std::string(luaL_tolstring(L, 2, nullptr)) + "' of a tensor");
  if (t.dims.size() != 1)
    throw Error("t[i] = v works on 1-D tensors; this one has size " + size_string(t.dims) +
                ", use t:set(i, j, ..., v)");
  float v = check_value(L, 3);
  t.data[offset_of(L, t, 2, 1)] = v;
  return 0;
}

int m_len(lua_State* L) {
  Tensor& t = check_tensor(L, 1);
  if (t.dims.empty()) throw Error("a scalar tensor has no length");
  lua_pushinteger(L, t.dims[0]);
  return 1;
}

// Values right-aligned in a common width, like Torch's print.
std::string format_values(const Tensor& t) {
  constexpr int64_t kMaxRows = 10, kMaxCols = 8, kMaxSlices = 3, kMax1D = 20;
  auto fmt = [](float v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.4g", static_cast<double>(v));
    return std::string(b);
  };
  std::ostringstream os;
  if (t.data.empty()) return "";
  if (t.dims.empty()) return fmt(t.data[0]) + "\n";
  size_t width = 0;
  for (size_t i = 0; i < std::min<size_t>(t.data.size(), 4096); ++i)
    width = std::max(width, fmt(t.data[i]).size());
  auto cell = [&](float v) {
    std::string s = fmt(v);
    return std::string(width + 2 - std::min(width, s.size()), ' ') + s;
  };
  if (t.dims.size() == 1) {
    int64_t n = t.dims[0];
    for (int64_t i = 0; i < std::min(n, kMax1D); ++i) os << cell(t.data[i]) << "\n";
    if (n > kMax1D) os << "  ... (" << (n - kMax1D) << " more)\n";
    return os.str();
  }
  int64_t rows = t.dims[t.dims.size() - 2], cols = t.dims.back();
  int64_t slices = static_cast<int64_t>(t.data.size()) / (rows * cols);
  for (int64_t s = 0; s < std::min(slices, kMaxSlices); ++s) {
    if (t.dims.size() > 2) {
      // Leading indices of this slice, 1-based: "(1,2,.,.) = "
      std::vector<int64_t> idx(t.dims.size() - 2);
      int64_t r = s;
      for (size_t k = idx.size(); k-- > 0;) {
        idx[k] = r % t.dims[k] + 1;
        r /= t.dims[k];
      }
      os << "(";
      for (int64_t i : idx) os << i << ",";
      os << ".,.) = \n";
    }
    const float* base = t.data.data() + s * rows * cols;
    for (int64_t r = 0; r < std::min(rows, kMaxRows); ++r) {
      for (int64_t c = 0; c < std::min(cols, kMaxCols); ++c) os << cell(base[r * cols + c]);
      if (cols > kMaxCols) os << "  ...";
      os << "\n";
    }
    if (rows > kMaxRows) os << "  ... (" << (rows - kMaxRows) << " more rows)\n";
    if (t.dims.size() > 2) os << "\n";
  }
  if (slices > kMaxSlices) os << "... (" << (slices - kMaxSlices) << " more slices)\n";
  return os.str();
}

int m_tostring(lua_State* L) {
  const Tensor& t = check_tensor(L, 1);
  std::string s = format_values(t) + "[frugal.FloatTensor of size " + size_string(t.dims) + "]";
  lua_pushlstring(L, s.data(), s.size());
  return 1;
}

const LuaBinding kModuleFunctions[] = {{"tensor", l_tensor},
                                       {"tensor_from_table", l_tensor_from_table},
                                       {"load_npy", l_load_npy},
                                       {"is_tensor", l_is_tensor},
                                       {nullptr, nullptr}};

const LuaBinding kMethods[] = {
    {"size", m_size},         {"dim", m_dim},         {"numel", m_numel},
    {"nElement", m_numel},    {"fill", m_fill},       {"get", m_get},
    {"set", m_set},           {"totable", m_totable}, {"random", m_random},
    {"clone", m_clone},       {"reshape", m_reshape}, {"sum", m_sum},
    {"min", m_min},           {"max", m_max},         {"max_abs_diff", m_max_abs_diff},
    {"save_npy", m_save_npy}, {nullptr, nullptr}};

const LuaBinding kMetamethods[] = {{"__index", m_index, "tensor[i]"},
                                   {"__newindex", m_newindex, "tensor[i] = v"},
                                   {"__len", m_len, "#tensor"},
                                   {"__tostring", m_tostring, "tostring(tensor)"},
                                   {nullptr, nullptr}};

}  // namespace

void check_tensor_fits_memory(const std::vector<int64_t>& dims) {
  int64_t n = checked_element_count(dims);
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  double machine = (pages > 0 && page > 0) ? static_cast<double>(pages) * page : 0;
  double need = static_cast<double>(n) * sizeof(float);
  if (n > INT64_MAX / 4 || (machine > 0 && need > machine)) {
    char b[160];
    std::snprintf(b, sizeof b, " needs %.3g GB, more than this machine's %.3g GB of memory", need / 1e9,
                  machine / 1e9);
    throw Error("a float32 tensor of size " + size_string(dims) + b);
  }
}

Tensor* test_tensor(lua_State* L, int idx) {
  auto** slot = static_cast<Tensor**>(luaL_testudata(L, idx, kTensorMetatable));
  return slot ? *slot : nullptr;
}

Tensor& check_tensor(lua_State* L, int idx) {
  auto** slot = static_cast<Tensor**>(luaL_checkudata(L, idx, kTensorMetatable));
  if (!*slot) throw Error("argument #" + std::to_string(idx) + " is a tensor that was already freed (__gc)");
  return **slot;
}

Tensor& push_tensor(lua_State* L, Tensor t) {
  auto** slot = static_cast<Tensor**>(
      lua_newuserdatauv(L, sizeof(Tensor*), 0));  // NOLINT(bugprone-sizeof-expression): holds a pointer
  *slot = nullptr;
  luaL_setmetatable(L, kTensorMetatable);  // from here on __gc owns *slot
  *slot = new Tensor(std::move(t));
  return **slot;
}

Tensor& push_new_tensor(lua_State* L, const std::vector<int64_t>& dims) {
  check_tensor_fits_memory(dims);
  Tensor& t = push_tensor(L, Tensor());  // owned by Lua (and __gc) before allocating
  t.data.assign(static_cast<size_t>(checked_element_count(dims)), 0.0f);
  t.dims = dims;
  return t;
}

void open_lua_tensor(lua_State* L, int module_index) {
  module_index = lua_absindex(L, module_index);
  luaL_newmetatable(L, kTensorMetatable);
  lua_pushcfunction(L, tensor_gc);
  lua_setfield(L, -2, "__gc");
  lua_pushstring(L, "frugal.FloatTensor");
  lua_setfield(L, -2, "__name");
  register_bindings(L, -1, kMetamethods, "");
  lua_newtable(L);
  register_bindings(L, -1, kMethods, "tensor:");
  lua_setfield(L, -2, "__methods");
  lua_pop(L, 1);
  register_bindings(L, module_index, kModuleFunctions, "frugal.");
}

}  // namespace frugal
