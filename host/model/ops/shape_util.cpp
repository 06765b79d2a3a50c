#include "model/ops/shape_util.h"

#include <algorithm>
#include <sstream>

#include "frugal/error.h"

namespace frugal::ops {

void bad(const std::string& msg) { throw Error(msg); }

std::string str(const Dims& d) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < d.size(); ++i) os << (i ? ", " : "") << d[i];
  os << "]";
  return os.str();
}

int64_t mul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) bad("size computation overflows int64");
  return r;
}

int64_t add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) bad("size computation overflows int64");
  return r;
}

int64_t product(const Dims& d, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t i = from; i < std::min(to, d.size()); ++i) p = mul(p, d[i]);
  return p;
}

const ValueShape& need(const Shapes& in, size_t i, const char* role) {
  if (i >= in.size() || !in[i].present)
    bad(std::string("missing required input ") + std::to_string(i) + " (" + role + ")");
  return in[i];
}

const ValueShape* opt(const Shapes& in, size_t i) {
  return i < in.size() && in[i].present ? &in[i] : nullptr;
}

int64_t norm_axis(int64_t axis, int64_t rank, const char* what) {
  if (axis < -rank || axis >= rank)
    bad(std::string(what) + " " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return axis < 0 ? axis + rank : axis;
}

ValueShape value(Dims dims, DType t) {
  ValueShape v;
  v.present = true;
  v.dims = std::move(dims);
  v.dtype = t;
  return v;
}

Dims broadcast(const ValueShape& a, const ValueShape& b) {
  const size_t r = std::max(a.dims.size(), b.dims.size());
  Dims out(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i < r - a.dims.size() ? 1 : a.dims[i - (r - a.dims.size())];
    const int64_t db = i < r - b.dims.size() ? 1 : b.dims[i - (r - b.dims.size())];
    if (da != db && da != 1 && db != 1)
      bad("inputs '" + a.name + "' " + str(a.dims) + " and '" + b.name + "' " + str(b.dims) +
          " cannot be broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

}  // namespace frugal::ops
