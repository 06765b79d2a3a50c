#include "frugal/model/ops/elementwise.h"

#include <algorithm>

#include "model/ops/shape_util.h"

namespace frugal::ops {

namespace {

void same_dtype(const ValueShape& a, const ValueShape& b) {
  if (a.dtype != DType::Undefined && b.dtype != DType::Undefined && a.dtype != b.dtype)
    bad(std::string("inputs '") + a.name + "' (" + dtype_name(a.dtype) + ") and '" + b.name + "' (" +
        dtype_name(b.dtype) + ") have different types");
}

// x op y for shape arithmetic; 0 where the result would overflow or divide by 0.
int64_t apply(Arithmetic::Fn fn, int64_t x, int64_t y) {
  int64_t r = 0;
  switch (fn) {
    case Arithmetic::Fn::Add:
      return __builtin_add_overflow(x, y, &r) ? 0 : r;
    case Arithmetic::Fn::Sub:
      return __builtin_sub_overflow(x, y, &r) ? 0 : r;
    case Arithmetic::Fn::Mul:
      return __builtin_mul_overflow(x, y, &r) ? 0 : r;
    case Arithmetic::Fn::Div:
      return y == 0 || (x == INT64_MIN && y == -1) ? 0 : x / y;
  }
  return 0;
}

}  // namespace

std::vector<ValueShape> Arithmetic::shape(const std::vector<ValueShape>& in) const {
  const ValueShape& a = need(in, 0, "A");
  const ValueShape& b = need(in, 1, "B");
  same_dtype(a, b);
  ValueShape y = value(broadcast(a, b), a.dtype);
  // Shape arithmetic (e.g. batch * channels) on small integer vectors.
  if (a.ints && b.ints && a.dims.size() <= 1 && b.dims.size() <= 1) {
    const auto &va = *a.ints, &vb = *b.ints;
    const size_t len = std::max(va.size(), vb.size());
    if ((va.size() == len || va.size() == 1) && (vb.size() == len || vb.size() == 1)) {
      std::vector<int64_t> r(len);
      for (size_t i = 0; i < len; ++i)
        r[i] = apply(fn, va[va.size() == 1 ? 0 : i], vb[vb.size() == 1 ? 0 : i]);
      y.ints = r;
    }
  }
  return outputs({y});
}

std::vector<ValueShape> Comparison::shape(const std::vector<ValueShape>& in) const {
  const ValueShape& a = need(in, 0, "A");
  const ValueShape& b = need(in, 1, "B");
  same_dtype(a, b);
  return outputs({value(broadcast(a, b), DType::Bool)});
}

std::vector<ValueShape> Where::shape(const std::vector<ValueShape>& in) const {
  const ValueShape& c = need(in, 0, "condition");
  const ValueShape& x = need(in, 1, "X");
  const ValueShape& y = need(in, 2, "Y");
  if (c.dtype != DType::Undefined && c.dtype != DType::Bool)
    bad(std::string("condition '") + c.name + "' has type " + dtype_name(c.dtype) + ", not bool");
  same_dtype(x, y);
  ValueShape xy = value(broadcast(x, y), x.dtype);
  xy.name = x.name + "' and '" + y.name;  // messages read "inputs 'c' [..] and 'x' and 'y' [..]"
  return outputs({value(broadcast(c, xy), x.dtype)});
}

std::vector<ValueShape> PRelu::shape(const std::vector<ValueShape>& in) const {
  const ValueShape& x = need(in, 0, "X");
  const ValueShape& slope = need(in, 1, "slope");
  same_dtype(x, slope);
  // Before opset 7 the slope is per channel whatever its shape; since, it broadcasts to X.
  if (opset() >= 7 && broadcast(x, slope) != x.dims)
    bad("slope '" + slope.name + "' " + str(slope.dims) + " does not broadcast to input '" + x.name + "' " +
        str(x.dims));
  return outputs({value(x.dims, x.dtype)});
}

}  // namespace frugal::ops
