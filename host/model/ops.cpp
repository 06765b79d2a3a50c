#include "frugal/model/ops.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <sstream>

#include "frugal/error.h"

namespace frugal {

namespace {

using Dims = std::vector<int64_t>;
using Outs = std::vector<ValueShape>;

[[noreturn]] void bad(const std::string& msg) { throw Error(msg); }

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

int64_t product(const Dims& d, size_t from = 0, size_t to = SIZE_MAX) {
  int64_t p = 1;
  for (size_t i = from; i < std::min(to, d.size()); ++i) p = mul(p, d[i]);
  return p;
}

// The input at `i`, which the op requires.
const ValueShape& need(const Node& n, const std::vector<ValueShape>& in, size_t i, const char* role) {
  if (i >= in.size() || !in[i].present)
    bad(std::string("missing required input ") + std::to_string(i) + " (" + role + ")");
  return in[i];
}

const ValueShape* opt(const std::vector<ValueShape>& in, size_t i) {
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

// One output per node output; those beyond `filled` copy the first.
Outs fill_outputs(const Node& n, Outs outs) {
  if (outs.size() < n.outputs.size()) {
    ValueShape first = outs.empty() ? ValueShape{} : outs.front();
    first.ints.reset();
    outs.resize(n.outputs.size(), first);
  }
  outs.resize(n.outputs.size());
  for (size_t i = 0; i < outs.size(); ++i) outs[i].name = n.outputs[i];
  return outs;
}

// ---- elementwise and pass-through ops ---------------------------------------

Outs same_as_input(const Node& n, const std::vector<ValueShape>& in) {
  const ValueShape& x = need(n, in, 0, "input");
  return fill_outputs(n, {value(x.dims, x.dtype)});
}

Outs identity(const Node& n, const std::vector<ValueShape>& in) {
  const ValueShape& x = need(n, in, 0, "input");
  ValueShape y = value(x.dims, x.dtype);
  y.ints = x.ints;
  return fill_outputs(n, {y});
}

Outs dropout(const Node& n, const std::vector<ValueShape>& in) {
  const ValueShape& x = need(n, in, 0, "data");
  return fill_outputs(n, {value(x.dims, x.dtype), value(x.dims, DType::Bool)});
}

Outs lrn(const Node& n, const std::vector<ValueShape>& in) {
  const ValueShape& x = need(n, in, 0, "X");
  if (x.dims.size() < 3)
    bad("input '" + x.name + "' has shape " + str(x.dims) + ", LRN needs [N, C, D1, ...]");
  if (n.attr_int("size", 0) <= 0) bad("attribute 'size' must be positive");
  return fill_outputs(n, {value(x.dims, x.dtype)});
}

Outs softmax(const Node& n, const std::vector<ValueShape>& in) {
  const ValueShape& x = need(n, in, 0, "input");
  if (!x.dims.empty()) norm_axis(n.attr_int("axis", -1), static_cast<int64_t>(x.dims.size()), "axis");
  return fill_outputs(n, {value(x.dims, x.dtype)});
}

// Multidirectional (numpy) broadcasting.
Dims broadcast(const ValueShape& a, const ValueShape& b) {
  size_t r = std::max(a.dims.size(), b.dims.size());
  Dims out(r);
  for (size_t i = 0; i < r; ++i) {
    int64_t da = i < r - a.dims.size() ? 1 : a.dims[i - (r - a.dims.size())];
    int64_t db = i < r - b.dims.size() ? 1 : b.dims[i - (r - b.dims.size())];
    if (da != db && da != 1 && db != 1)
      bad("inputs '" + a.name + "' " + str(a.dims) + " and '" + b.name + "' " + str(b.dims) +
          " cannot be broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

template <typename F>
Outs binary(const Node& n, const std::vector<ValueShape>& in, F f) {
  const ValueShape& a = need(n, in, 0, "A");
  const ValueShape& b = need(n, in, 1, "B");
  if (a.dtype != DType::Undefined && b.dtype != DType::Undefined && a.dtype != b.dtype)
    bad(std::string("inputs '") + a.name + "' (" + dtype_name(a.dtype) + ") and '" + b.name + "' (" +
        dtype_name(b.dtype) + ") have different types");
  ValueShape y = value(broadcast(a, b), a.dtype);
  // Shape arithmetic (e.g. batch * channels) on small integer vectors.
  if (a.ints && b.ints && a.dims.size() <= 1 && b.dims.size() <= 1) {
    const auto &va = *a.ints, &vb = *b.ints;
    size_t len = std::max(va.size(), vb.size());
    if ((va.size() == len || va.size() == 1) && (vb.size() == len || vb.size() == 1)) {
      std::vector<int64_t> r(len);
      for (size_t i = 0; i < len; ++i) r[i] = f(va[va.size() == 1 ? 0 : i], vb[vb.size() == 1 ? 0 : i]);
      y.ints = r;
    }
  }
  return fill_outputs(n, {y});
}

Outs add(const Node& n, const std::vector<ValueShape>& in) {
  return binary(n, in, [](int64_t x, int64_t y) {
    int64_t r;
    return __builtin_add_overflow(x, y, &r) ? 0 : r;
  });
}
Outs mul_op(const Node& n, const std::vector<ValueShape>& in) {
  return binary(n, in, [](int64_t x, int64_t y) {
    int64_t r;
    return __builtin_mul_overflow(x, y, &r) ? 0 : r;
  });
}

Outs clip(const Node& n, const std::vector<ValueShape>& in) {
  const ValueShape& x = need(n, in, 0, "input");
  for (size_t i = 1; i < 3; ++i)
    if (const ValueShape* m = opt(in, i))
      if (product(m->dims) != 1)
        bad("input '" + m->name + "' (min/max) must be a scalar, has shape " + str(m->dims));
  return fill_outputs(n, {value(x.dims, x.dtype)});
}

// ---- convolution and pooling --------------------------------------------------

// Output spatial sizes of a sliding window (Conv, MaxPool, AveragePool).
Dims window_output(const Node& n, const ValueShape& x, const Dims& kernel, bool ceil_mode) {
  const size_t ns = kernel.size();
  Dims ones(ns, 1), zeros(2 * ns, 0);
  Dims strides = n.attr_ints("strides", ones);
  Dims dil = n.attr_ints("dilations", ones);
  Dims pads = n.attr_ints("pads", zeros);
  const std::string auto_pad = n.attr_string("auto_pad", "NOTSET");
  if (strides.size() != ns)
    bad("attribute 'strides' has " + std::to_string(strides.size()) + " values, expected " +
        std::to_string(ns));
  if (dil.size() != ns)
    bad("attribute 'dilations' has " + std::to_string(dil.size()) + " values, expected " +
        std::to_string(ns));
  if (pads.size() != 2 * ns)
    bad("attribute 'pads' has " + std::to_string(pads.size()) + " values, expected " +
        std::to_string(2 * ns));
  if (auto_pad != "NOTSET" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER" && auto_pad != "VALID")
    bad("attribute 'auto_pad' has unknown value '" + auto_pad + "'");
  Dims out(ns);
  for (size_t i = 0; i < ns; ++i) {
    const int64_t in = x.dims[2 + i], k = kernel[i], s = strides[i], d = dil[i];
    if (k <= 0 || s <= 0 || d <= 0) bad("kernel, strides and dilations must be positive");
    if (pads[i] < 0 || pads[i + ns] < 0) bad("attribute 'pads' has a negative value");
    const int64_t ek = add(mul(k - 1, d), 1);  // effective (dilated) kernel extent
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out[i] = in / s + (in % s != 0);
    } else {
      const int64_t pb = auto_pad == "VALID" ? 0 : pads[i], pe = auto_pad == "VALID" ? 0 : pads[i + ns];
      const int64_t span = add(add(in, pb), pe) - ek;  // all terms >= 0: the subtraction cannot overflow
      if (span < 0)
        bad("input '" + x.name + "' " + str(x.dims) + " is smaller than the kernel (extent " +
            std::to_string(ek) + " in spatial dimension " + std::to_string(i) + ")");
      out[i] = span / s + (ceil_mode && span % s != 0) + 1;
      // As PyTorch and later ONNX: a last window that starts in the end padding is dropped.
      if (ceil_mode && out[i] > 1 && mul(out[i] - 1, s) >= in + pb) --out[i];
    }
  }
  return out;
}

Outs conv(const Node& n, const std::vector<ValueShape>& in) {
  const ValueShape& x = need(n, in, 0, "X");
  const ValueShape& w = need(n, in, 1, "W");
  if (x.dims.size() < 3)
    bad("input '" + x.name + "' has shape " + str(x.dims) + ", Conv needs [N, C, D1, ...]");
  if (w.dims.size() != x.dims.size())
    bad("weight '" + w.name + "' has shape " + str(w.dims) + ", which does not match the rank of input '" +
        x.name + "' " + str(x.dims));
  const int64_t group = n.attr_int("group", 1);
  if (group <= 0) bad("attribute 'group' must be positive");
  const int64_t c = x.dims[1], m = w.dims[0];
  if (mul(w.dims[1], group) != c) {
    std::string expects = std::to_string(w.dims[1] * group);
    if (group != 1)
      expects += " (" + std::to_string(w.dims[1]) + " per group x " + std::to_string(group) + " groups)";
    bad("input '" + x.name + "' has " + std::to_string(c) + " channels, weight expects " + expects);
  }
  if (m % group != 0)
    bad("weight '" + w.name + "' has " + std::to_string(m) + " filters, not divisible by group " +
        std::to_string(group));
  Dims kernel(w.dims.begin() + 2, w.dims.end());
  if (n.has_attr("kernel_shape") && n.attr_ints("kernel_shape", {}) != kernel)
    bad("attribute 'kernel_shape' " + str(n.attr_ints("kernel_shape", {})) + " differs from weight '" +
        w.name + "' " + str(w.dims));
  if (const ValueShape* b = opt(in, 2))
    if (b->dims != Dims{m})
      bad("bias '" + b->name + "' has shape " + str(b->dims) + ", expected [" + std::to_string(m) + "]");
  Dims out{x.dims[0], m};
  for (int64_t s : window_output(n, x, kernel, false)) out.push_back(s);
  return fill_outputs(n, {value(out, x.dtype)});
}

int64_t conv_macs(const Node& n, const std::vector<ValueShape>& in, const std::vector<ValueShape>& out) {
  // Each output element needs (C / group) * prod(kernel) multiply-accumulates.
  const Dims& w = in[1].dims;
  return mul(product(out[0].dims), product(w, 1));
}

Outs pool(const Node& n, const std::vector<ValueShape>& in) {
  const ValueShape& x = need(n, in, 0, "X");
  if (x.dims.size() < 3)
    bad("input '" + x.name + "' has shape " + str(x.dims) + ", pooling needs [N, C, D1, ...]");
  if (!n.has_attr("kernel_shape")) bad("attribute 'kernel_shape' is required");
  Dims kernel = n.attr_ints("kernel_shape", {});
  if (kernel.size() != x.dims.size() - 2)
    bad("attribute 'kernel_shape' " + str(kernel) + " does not match input '" + x.name + "' " + str(x.dims));
  Dims out{x.dims[0], x.dims[1]};
  for (int64_t s : window_output(n, x, kernel, n.attr_int("ceil_mode", 0) != 0)) out.push_back(s);
  return fill_outputs(n, {value(out, x.dtype), value(out, DType::Int64)});
}

Outs global_pool(const Node& n, const std::vector<ValueShape>& in) {
  const ValueShape& x = need(n, in, 0, "X");
  if (x.dims.size() < 3)
    bad("input '" + x.name + "' has shape " + str(x.dims) + ", pooling needs [N, C, D1, ...]");
  Dims out(x.dims.size(), 1);
  out[0] = x.dims[0];
  out[1] = x.dims[1];
  return fill_outputs(n, {value(out, x.dtype)});
}

Outs batchnorm(const Node& n, const std::vector<ValueShape>& in) {
  const ValueShape& x = need(n, in, 0, "X");
  if (x.dims.size() < 2)
    bad("input '" + x.name + "' has shape " + str(x.dims) + ", BatchNormalization needs [N, C, ...]");
  const int64_t c = x.dims[1];
  static const char* roles[] = {"X", "scale", "B", "input_mean", "input_var"};
  for (size_t i = 1; i < 5; ++i) {
    const ValueShape& p = need(n, in, i, roles[i]);
    if (p.dims != Dims{c})
      bad("input '" + p.name + "' (" + roles[i] + ") has shape " + str(p.dims) + ", expected [" +
          std::to_string(c) + "] for input '" + x.name + "' " + str(x.dims));
  }
  Outs outs{value(x.dims, x.dtype)};
  for (size_t i = 1; i < n.outputs.size(); ++i)
    outs.push_back(value({c}, in[3].dtype));  // running/saved stats
  return fill_outputs(n, outs);
}

// ---- matrix products ------------------------------------------------------------

Outs gemm(const Node& n, const std::vector<ValueShape>& in) {
  const ValueShape& a = need(n, in, 0, "A");
  const ValueShape& b = need(n, in, 1, "B");
  if (a.dims.size() != 2) bad("input A '" + a.name + "' has shape " + str(a.dims) + ", Gemm needs a matrix");
  if (b.dims.size() != 2) bad("input B '" + b.name + "' has shape " + str(b.dims) + ", Gemm needs a matrix");
  const bool ta = n.attr_int("transA", 0) != 0, tb = n.attr_int("transB", 0) != 0;
  const int64_t m = ta ? a.dims[1] : a.dims[0], k = ta ? a.dims[0] : a.dims[1];
  const int64_t kb = tb ? b.dims[1] : b.dims[0], nn = tb ? b.dims[0] : b.dims[1];
  if (k != kb)
    bad("inner dimensions differ: A '" + a.name + "' " + str(a.dims) + (ta ? " (transposed)" : "") +
        " gives K=" + std::to_string(k) + ", B '" + b.name + "' " + str(b.dims) +
        (tb ? " (transposed)" : "") + " gives K=" + std::to_string(kb));
  if (const ValueShape* c = opt(in, 2)) {  // unidirectional broadcast to [M, N]
    const Dims target{m, nn};
    bool ok = c->dims.size() <= 2;
    for (size_t i = 0; ok && i < c->dims.size(); ++i) {
      int64_t t = target[2 - c->dims.size() + i];
      ok = c->dims[i] == 1 || c->dims[i] == t;
    }
    if (!ok) bad("input C '" + c->name + "' " + str(c->dims) + " cannot be broadcast to " + str(target));
  }
  return fill_outputs(n, {value({m, nn}, a.dtype)});
}

int64_t gemm_macs(const Node& n, const std::vector<ValueShape>& in, const std::vector<ValueShape>& out) {
  const Dims& a = in[0].dims;
  const int64_t k = n.attr_int("transA", 0) ? a[0] : a[1];
  return mul(product(out[0].dims), k);
}

Outs matmul(const Node& n, const std::vector<ValueShape>& in) {
  const ValueShape& a = need(n, in, 0, "A");
  const ValueShape& b = need(n, in, 1, "B");
  if (a.dims.empty() || b.dims.empty()) bad("MatMul inputs must have rank >= 1");
  Dims da = a.dims, db = b.dims;
  if (da.size() == 1) da.insert(da.begin(), 1);  // numpy: 1-D operands get a unit dim
  if (db.size() == 1) db.push_back(1);
  const int64_t m = da[da.size() - 2], k = da.back(), kb = db[db.size() - 2], nn = db.back();
  if (k != kb)
    bad("inner dimensions differ: '" + a.name + "' " + str(a.dims) + " gives K=" + std::to_string(k) + ", '" +
        b.name + "' " + str(b.dims) + " gives K=" + std::to_string(kb));
  ValueShape ba = value(Dims(da.begin(), da.end() - 2), a.dtype),
             bb = value(Dims(db.begin(), db.end() - 2), b.dtype);
  ba.name = a.name;
  bb.name = b.name;
  Dims out = broadcast(ba, bb);
  if (a.dims.size() > 1) out.push_back(m);
  if (b.dims.size() > 1) out.push_back(nn);
  return fill_outputs(n, {value(out, a.dtype)});
}

int64_t matmul_macs(const Node& n, const std::vector<ValueShape>& in, const std::vector<ValueShape>& out) {
  return mul(product(out[0].dims), in[0].dims.back());  // every output element: K products
}

// ---- shape manipulation ------------------------------------------------------------

Outs flatten(const Node& n, const std::vector<ValueShape>& in) {
  const ValueShape& x = need(n, in, 0, "input");
  const int64_t r = static_cast<int64_t>(x.dims.size());
  int64_t axis = n.attr_int("axis", 1);
  if (axis < -r || axis > r)
    bad("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r));
  if (axis < 0) axis += r;
  return fill_outputs(
      n, {value({product(x.dims, 0, static_cast<size_t>(axis)), product(x.dims, static_cast<size_t>(axis))},
                x.dtype)});
}

Outs reshape(const Node& n, const std::vector<ValueShape>& in) {
  const ValueShape& x = need(n, in, 0, "data");
  const ValueShape& s = need(n, in, 1, "shape");
  if (!s.ints)
    bad("target shape '" + s.name +
        "' is not a constant (an initializer, a Constant node, or computed from Shape)");
  const bool allowzero = n.attr_int("allowzero", 0) != 0;
  const Dims& want = *s.ints;
  Dims out(want.size());
  int infer = -1;
  int64_t known = 1;
  for (size_t i = 0; i < want.size(); ++i) {
    int64_t v = want[i];
    if (v == 0 && !allowzero) {
      if (i >= x.dims.size())
        bad("target shape " + str(want) + " copies dimension " + std::to_string(i) + ", which input '" +
            x.name + "' " + str(x.dims) + " lacks");
      v = x.dims[i];
    }
    if (v == -1) {
      if (infer >= 0) bad("target shape " + str(want) + " has more than one -1");
      infer = static_cast<int>(i);
      continue;
    }
    if (v < 0) bad("target shape " + str(want) + " has invalid dimension " + std::to_string(v));
    out[i] = v;
    known = mul(known, v);
  }
  const int64_t total = product(x.dims);
  if (infer >= 0) {
    if (known == 0 || total % known != 0)
      bad("cannot reshape input '" + x.name + "' " + str(x.dims) + " to " + str(want));
    out[static_cast<size_t>(infer)] = total / known;
  } else if (known != total) {
    bad("cannot reshape input '" + x.name + "' " + str(x.dims) + " (" + std::to_string(total) +
        " elements) to " + str(out));
  }
  ValueShape y = value(out, x.dtype);
  y.ints = x.ints;
  return fill_outputs(n, {y});
}

Outs concat(const Node& n, const std::vector<ValueShape>& in) {
  std::vector<const ValueShape*> xs;
  for (const ValueShape& v : in)
    if (v.present) xs.push_back(&v);
  if (xs.empty()) bad("Concat needs at least one input");
  if (!n.has_attr("axis")) bad("attribute 'axis' is required");
  const int64_t r = static_cast<int64_t>(xs[0]->dims.size());
  if (r == 0) bad("Concat inputs must have rank >= 1");
  const size_t axis = static_cast<size_t>(norm_axis(n.attr_int("axis", 0), r, "axis"));
  Dims out = xs[0]->dims;
  out[axis] = 0;
  bool all_ints = true;
  std::vector<int64_t> ints;
  for (const ValueShape* v : xs) {
    if (v->dims.size() != out.size())
      bad("input '" + v->name + "' " + str(v->dims) + " has a different rank than '" + xs[0]->name + "' " +
          str(xs[0]->dims));
    for (size_t i = 0; i < out.size(); ++i)
      if (i != axis && v->dims[i] != xs[0]->dims[i])
        bad("input '" + v->name + "' " + str(v->dims) + " differs from '" + xs[0]->name + "' " +
            str(xs[0]->dims) + " outside the concatenation axis " + std::to_string(axis));
    out[axis] = add(out[axis], v->dims[axis]);
    if (v->ints && r == 1)
      ints.insert(ints.end(), v->ints->begin(), v->ints->end());
    else
      all_ints = false;
  }
  ValueShape y = value(out, xs[0]->dtype);
  if (all_ints) y.ints = ints;
  return fill_outputs(n, {y});
}

Outs shape_op(const Node& n, const std::vector<ValueShape>& in) {
  const ValueShape& x = need(n, in, 0, "data");
  const int64_t r = static_cast<int64_t>(x.dims.size());
  int64_t start = n.attr_int("start", 0), end = n.attr_int("end", r);
  if (start < 0) start += r;
  if (end < 0) end += r;
  start = std::clamp<int64_t>(start, 0, r);
  end = std::clamp<int64_t>(end, 0, r);
  Dims vals;
  for (int64_t i = start; i < end; ++i) vals.push_back(x.dims[static_cast<size_t>(i)]);
  ValueShape y = value({static_cast<int64_t>(vals.size())}, DType::Int64);
  y.ints = vals;
  return fill_outputs(n, {y});
}

Outs gather(const Node& n, const std::vector<ValueShape>& in) {
  const ValueShape& d = need(n, in, 0, "data");
  const ValueShape& idx = need(n, in, 1, "indices");
  if (d.dims.empty()) bad("input '" + d.name + "' must have rank >= 1");
  const size_t axis =
      static_cast<size_t>(norm_axis(n.attr_int("axis", 0), static_cast<int64_t>(d.dims.size()), "axis"));
  Dims out(d.dims.begin(), d.dims.begin() + static_cast<long>(axis));
  out.insert(out.end(), idx.dims.begin(), idx.dims.end());
  out.insert(out.end(), d.dims.begin() + static_cast<long>(axis) + 1, d.dims.end());
  ValueShape y = value(out, d.dtype);
  if (idx.ints) {
    const int64_t size = d.dims[axis];
    std::vector<int64_t> picked;
    for (int64_t i : *idx.ints) {
      if (i < -size || i >= size)
        bad("index " + std::to_string(i) + " is out of range for axis " + std::to_string(axis) + " of '" +
            d.name + "' " + str(d.dims));
      if (d.ints && d.dims.size() == 1)
        picked.push_back((*d.ints)[static_cast<size_t>(i < 0 ? i + size : i)]);
    }
    if (d.ints && d.dims.size() == 1) y.ints = picked;
  }
  return fill_outputs(n, {y});
}

// Axes of Unsqueeze/Squeeze: an attribute before opset 13, an input since.
std::optional<Dims> axes_of(const Node& n, const std::vector<ValueShape>& in) {
  if (n.has_attr("axes")) return n.attr_ints("axes", {});
  if (const ValueShape* a = opt(in, 1)) {
    if (!a->ints) bad("axes '" + a->name + "' are not a constant");
    return *a->ints;
  }
  return std::nullopt;
}

Outs unsqueeze(const Node& n, const std::vector<ValueShape>& in) {
  const ValueShape& x = need(n, in, 0, "data");
  std::optional<Dims> axes = axes_of(n, in);
  if (!axes) bad("axes are required");
  const int64_t r = static_cast<int64_t>(x.dims.size() + axes->size());
  std::set<int64_t> at;
  for (int64_t a : *axes)
    if (!at.insert(norm_axis(a, r, "axis")).second) bad("axis " + std::to_string(a) + " is given twice");
  Dims out;
  size_t k = 0;
  for (int64_t i = 0; i < r; ++i) out.push_back(at.count(i) ? 1 : x.dims[k++]);
  ValueShape y = value(out, x.dtype);
  y.ints = x.ints;
  return fill_outputs(n, {y});
}

Outs squeeze(const Node& n, const std::vector<ValueShape>& in) {
  const ValueShape& x = need(n, in, 0, "data");
  std::optional<Dims> axes = axes_of(n, in);
  const int64_t r = static_cast<int64_t>(x.dims.size());
  std::set<int64_t> drop;
  if (axes) {
    for (int64_t a : *axes) {
      int64_t i = norm_axis(a, r, "axis");
      if (x.dims[static_cast<size_t>(i)] != 1)
        bad("cannot squeeze axis " + std::to_string(a) + " of '" + x.name + "' " + str(x.dims) +
            ": its size is not 1");
      drop.insert(i);
    }
  } else {
    for (int64_t i = 0; i < r; ++i)
      if (x.dims[static_cast<size_t>(i)] == 1) drop.insert(i);
  }
  Dims out;
  for (int64_t i = 0; i < r; ++i)
    if (!drop.count(i)) out.push_back(x.dims[static_cast<size_t>(i)]);
  ValueShape y = value(out, x.dtype);
  y.ints = x.ints;
  return fill_outputs(n, {y});
}

Outs transpose(const Node& n, const std::vector<ValueShape>& in) {
  const ValueShape& x = need(n, in, 0, "data");
  const size_t r = x.dims.size();
  Dims perm(r);
  for (size_t i = 0; i < r; ++i) perm[i] = static_cast<int64_t>(r - 1 - i);
  perm = n.attr_ints("perm", perm);
  Dims sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < r; ++i)
    if (sorted.size() != r || sorted[i] != static_cast<int64_t>(i))
      bad("attribute 'perm' " + str(perm) + " is not a permutation of the axes of '" + x.name + "' " +
          str(x.dims));
  Dims out(r);
  for (size_t i = 0; i < r; ++i) out[i] = x.dims[static_cast<size_t>(perm[i])];
  return fill_outputs(n, {value(out, x.dtype)});
}

Outs constant(const Node& n, const std::vector<ValueShape>&) {
  if (const Attribute* a = n.attr("value")) {
    if (a->kind != Attribute::Kind::Tensor || !a->t) bad("attribute 'value' is not a tensor");
    const TensorDesc& t = *a->t;
    ValueShape y = value(known_dims(t.shape), t.dtype);
    if ((t.dtype == DType::Int64 || t.dtype == DType::Int32) && product(y.dims) <= 1024)
      y.ints = t.as_int64();
    return fill_outputs(n, {y});
  }
  if (n.has_attr("value_float")) return fill_outputs(n, {value({}, DType::Float32)});
  if (const Attribute* a = n.attr("value_floats"))
    return fill_outputs(n, {value({static_cast<int64_t>(a->floats.size())}, DType::Float32)});
  if (const Attribute* a = n.attr("value_int")) {
    ValueShape y = value({}, DType::Int64);
    y.ints = std::vector<int64_t>{a->i};
    return fill_outputs(n, {y});
  }
  if (const Attribute* a = n.attr("value_ints")) {
    ValueShape y = value({static_cast<int64_t>(a->ints.size())}, DType::Int64);
    y.ints = a->ints;
    return fill_outputs(n, {y});
  }
  bad("no supported value attribute (value, value_float(s), value_int(s))");
}

// The table. MAC functions only for ops whose cost is multiply-accumulates.
const OpDef kOps[] = {
    {"Add", add, nullptr},
    {"AveragePool", pool, nullptr},
    {"BatchNormalization", batchnorm, nullptr},
    {"Clip", clip, nullptr},
    {"Concat", concat, nullptr},
    {"Constant", constant, nullptr},
    {"Conv", conv, conv_macs},
    {"Dropout", dropout, nullptr},
    {"Flatten", flatten, nullptr},
    {"Gather", gather, nullptr},
    {"Gemm", gemm, gemm_macs},
    {"GlobalAveragePool", global_pool, nullptr},
    {"Identity", identity, nullptr},
    {"LRN", lrn, nullptr},
    {"MatMul", matmul, matmul_macs},
    {"MaxPool", pool, nullptr},
    {"Mul", mul_op, nullptr},
    {"Relu", same_as_input, nullptr},
    {"Reshape", reshape, nullptr},
    {"Shape", shape_op, nullptr},
    {"Sigmoid", same_as_input, nullptr},
    {"Softmax", softmax, nullptr},
    {"Squeeze", squeeze, nullptr},
    {"Transpose", transpose, nullptr},
    {"Unsqueeze", unsqueeze, nullptr},
};

const OpDef* lookup(const std::string& op_type) {
  for (const OpDef& d : kOps)
    if (op_type == d.op_type) return &d;
  return nullptr;
}

bool default_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

}  // namespace

bool op_is_known(const std::string& op_type) { return lookup(op_type) != nullptr; }

std::vector<std::string> known_ops() {
  std::vector<std::string> out;
  for (const OpDef& d : kOps) out.push_back(d.op_type);
  std::sort(out.begin(), out.end());
  return out;
}

const OpDef* find_op(const Node& n) { return default_domain(n.domain) ? lookup(n.op_type) : nullptr; }

std::vector<std::string> unknown_op_nodes(const Graph& g) {
  std::vector<std::string> out;
  for (const Node& n : g.nodes)
    if (!find_op(n))
      out.push_back((default_domain(n.domain) ? "" : n.domain + ".") + n.op_type + " (node '" + n.name +
                    "')");
  return out;
}

}  // namespace frugal
