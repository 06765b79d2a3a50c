// Tensor arithmetic, reductions and comparisons (docs/LUA.md). Operators
// return new tensors; methods change the tensor in place and return it, as in
// Torch7. Element-wise operations between two tensors need equal sizes.
#include <algorithm>
#include <cmath>
#include <functional>

#include "frugal/error.h"
#include "lua/lua_tensor.h"
#include "tensor/tensor_reduce.h"

namespace frugal {

namespace {

void check_same_sizes(const StridedTensor& a, const StridedTensor& b) {
  if (a.sizes != b.sizes)
    throw Error("sizes differ: " + size_string(a.sizes) + " vs " + size_string(b.sizes));
}

float number_arg(lua_State* L, int idx, const char* what) {
  if (lua_type(L, idx) != LUA_TNUMBER)
    throw Error(std::string(what) + " must be a number or a tensor, got " + luaL_typename(L, idx));
  return static_cast<float>(lua_tonumber(L, idx));
}

using Op = std::function<float(float, float)>;

// t = op(t, other) where other is the number or tensor at idx, scaled by `scale`.
void apply_in_place(lua_State* L, StridedTensor& t, int idx, const Op& op, float scale = 1.0f) {
  if (const StridedTensor* u = test_tensor(L, idx)) {
    check_same_sizes(t, *u);
    const StridedTensor other = u->storage == t.storage ? u->clone() : *u;
    for_each_index_pair(t, other, [&](int64_t i, int64_t j) { t.at(i) = op(t.at(i), scale * other.at(j)); });
    return;
  }
  if (is_object(L, idx, kTensorType)) check_tensor(L, idx);  // a closed tensor: say so
  const float v = scale * number_arg(L, idx, "the operand");
  for_each_index(t, [&](int64_t i) { t.at(i) = op(t.at(i), v); });
}

// x:add(v), x:add(y), x:add(a, y) (x += a * y); the same shape for sub.
int in_place_add(lua_State* L, const Op& op) {
  StridedTensor& t = check_tensor(L, 1);
  if (lua_gettop(L) >= 3) {
    if (lua_type(L, 2) != LUA_TNUMBER)
      throw Error(std::string("the scale in x:add(scale, y) must be a number, got ") + luaL_typename(L, 2));
    const float a = static_cast<float>(lua_tonumber(L, 2));
    check_tensor(L, 3);
    apply_in_place(L, t, 3, op, a);
  } else {
    apply_in_place(L, t, 2, op);
  }
  lua_settop(L, 1);
  return 1;
}

int m_add(lua_State* L) { return in_place_add(L, std::plus<float>()); }
int m_sub(lua_State* L) { return in_place_add(L, std::minus<float>()); }

int in_place(lua_State* L, const Op& op) {
  StridedTensor& t = check_tensor(L, 1);
  apply_in_place(L, t, 2, op);
  lua_settop(L, 1);
  return 1;
}

int m_mul(lua_State* L) { return in_place(L, std::multiplies<float>()); }
int m_div(lua_State* L) { return in_place(L, std::divides<float>()); }

int m_clamp(lua_State* L) {
  StridedTensor& t = check_tensor(L, 1);
  const float lo = lua_isnoneornil(L, 2) ? -INFINITY : number_arg(L, 2, "min");
  const float hi = lua_isnoneornil(L, 3) ? INFINITY : number_arg(L, 3, "max");
  if (lo > hi) throw Error("min " + std::to_string(lo) + " is above max " + std::to_string(hi));
  for_each_index(t, [&](int64_t i) { t.at(i) = std::min(hi, std::max(lo, t.at(i))); });
  lua_settop(L, 1);
  return 1;
}

// a OP b for the operators: either side may be a number.
int binary_operator(lua_State* L, const Op& op) {
  for (int i : {1, 2})
    if (is_object(L, i, kTensorType)) check_tensor(L, i);  // a closed tensor: say so
  const StridedTensor* a = test_tensor(L, 1);
  const StridedTensor* b = test_tensor(L, 2);  // Lua calls this only when one of them is a tensor
  if (a && b) check_same_sizes(*a, *b);
  const StridedTensor& shape = a ? *a : *b;
  StridedTensor& out = push_new_tensor(L, shape.sizes);
  if (a && b) {
    int64_t k = 0;
    for_each_index_pair(*a, *b, [&](int64_t i, int64_t j) { out.at(k++) = op(a->at(i), b->at(j)); });
  } else if (a) {
    const float v = number_arg(L, 2, "the right operand");
    int64_t k = 0;
    for_each_index(*a, [&](int64_t i) { out.at(k++) = op(a->at(i), v); });
  } else {
    const float v = number_arg(L, 1, "the left operand");
    int64_t k = 0;
    for_each_index(*b, [&](int64_t i) { out.at(k++) = op(v, b->at(i)); });
  }
  return 1;
}

int op_add(lua_State* L) { return binary_operator(L, std::plus<float>()); }
int op_sub(lua_State* L) { return binary_operator(L, std::minus<float>()); }
int op_mul(lua_State* L) { return binary_operator(L, std::multiplies<float>()); }
int op_div(lua_State* L) { return binary_operator(L, std::divides<float>()); }

int op_unm(lua_State* L) {
  const StridedTensor& t = check_tensor(L, 1);
  StridedTensor& out = push_new_tensor(L, t.sizes);
  int64_t k = 0;
  for_each_index(t, [&](int64_t i) { out.at(k++) = -t.at(i); });
  return 1;
}

// ---- reductions -------------------------------------------------------------

int reduce(lua_State* L, Reduction r) {
  const StridedTensor& t = check_tensor(L, 1);
  if (lua_isnoneornil(L, 2))
    lua_pushnumber(L, reduce_all(t, r));
  else
    push_tensor(L, reduce_dim(t, dim_from_lua(L, 2, t), r));
  return 1;
}

int m_sum(lua_State* L) { return reduce(L, Reduction::Sum); }
int m_mean(lua_State* L) { return reduce(L, Reduction::Mean); }

// x:max() -> number; x:max(d) -> values, indices along d (as Torch7).
int extreme(lua_State* L, bool want_max) {
  const StridedTensor& t = check_tensor(L, 1);
  if (lua_isnoneornil(L, 2)) {
    lua_pushnumber(L, extreme_all(t, want_max).value);
    return 1;
  }
  auto vi = extreme_dim(t, dim_from_lua(L, 2, t), want_max);
  push_tensor(L, std::move(vi.first));
  push_tensor(L, std::move(vi.second));
  return 2;
}

int m_max(lua_State* L) { return extreme(L, true); }
int m_min(lua_State* L) { return extreme(L, false); }

// x:argmax() -> 1-based position in C order; x:argmax(d) -> indices along d.
int arg_extreme(lua_State* L, bool want_max) {
  const StridedTensor& t = check_tensor(L, 1);
  if (lua_isnoneornil(L, 2)) {
    lua_pushinteger(L, extreme_all(t, want_max).index);
    return 1;
  }
  push_tensor(L, extreme_dim(t, dim_from_lua(L, 2, t), want_max).second);
  return 1;
}

int m_argmax(lua_State* L) { return arg_extreme(L, true); }
int m_argmin(lua_State* L) { return arg_extreme(L, false); }

// x:topk(k [, dim [, largest]]): dim defaults to the last, largest to true.
int m_topk(lua_State* L) {
  const StridedTensor& t = check_tensor(L, 1);
  if (t.dim() == 0) throw Error("a tensor of no dimensions has no top k");
  const lua_Integer k = luaL_checkinteger(L, 2);
  const size_t d = lua_isnoneornil(L, 3) ? t.dim() - 1 : dim_from_lua(L, 3, t);
  const bool largest = lua_isnoneornil(L, 4) ? true : lua_toboolean(L, 4);
  auto vi = topk(t, k, d, largest);
  push_tensor(L, std::move(vi.first));
  push_tensor(L, std::move(vi.second));
  return 2;
}

// ---- comparisons ------------------------------------------------------------

int m_max_abs_diff(lua_State* L) {
  const StridedTensor& a = check_tensor(L, 1);
  const StridedTensor& b = check_tensor(L, 2);
  check_same_sizes(a, b);
  double m = 0;
  for_each_index_pair(a, b, [&](int64_t i, int64_t j) {
    const double d = std::fabs(static_cast<double>(a.at(i)) - b.at(j));
    if (std::isnan(d) || std::isnan(m))
      m = NAN;
    else
      m = std::max(m, d);
  });
  lua_pushnumber(L, m);
  return 1;
}

// |x - y| <= atol + rtol * |y| everywhere (NumPy's rule and defaults); NaN is never close.
int m_allclose(lua_State* L) {
  const StridedTensor& a = check_tensor(L, 1);
  const StridedTensor& b = check_tensor(L, 2);
  const double rtol = luaL_optnumber(L, 3, 1e-5), atol = luaL_optnumber(L, 4, 1e-8);
  if (!(rtol >= 0) || !(atol >= 0)) throw Error("rtol and atol must be >= 0");
  bool close = a.sizes == b.sizes;
  if (close)
    for_each_index_pair(a, b, [&](int64_t i, int64_t j) {
      const double x = a.at(i), y = b.at(j);
      if (!(std::fabs(x - y) <= atol + rtol * std::fabs(y))) close = false;
    });
  lua_pushboolean(L, close);
  return 1;
}

int m_equal(lua_State* L) {
  const StridedTensor& a = check_tensor(L, 1);
  const StridedTensor& b = check_tensor(L, 2);
  bool same = a.sizes == b.sizes;
  if (same) for_each_index_pair(a, b, [&](int64_t i, int64_t j) { same = same && a.at(i) == b.at(j); });
  lua_pushboolean(L, same);
  return 1;
}

}  // namespace

const LuaBinding kTensorMathMethods[] = {{"add", m_add},
                                         {"sub", m_sub},
                                         {"mul", m_mul},
                                         {"div", m_div},
                                         {"clamp", m_clamp},
                                         {"sum", m_sum},
                                         {"mean", m_mean},
                                         {"max", m_max},
                                         {"min", m_min},
                                         {"argmax", m_argmax},
                                         {"argmin", m_argmin},
                                         {"topk", m_topk},
                                         {"max_abs_diff", m_max_abs_diff},
                                         {"allclose", m_allclose},
                                         {"equal", m_equal},
                                         {nullptr, nullptr}};

const LuaBinding kTensorMathMetamethods[] = {
    {"__add", op_add, "tensor + value"}, {"__sub", op_sub, "tensor - value"},
    {"__mul", op_mul, "tensor * value"}, {"__div", op_div, "tensor / value"},
    {"__unm", op_unm, "-tensor"},        {nullptr, nullptr}};

}  // namespace frugal
