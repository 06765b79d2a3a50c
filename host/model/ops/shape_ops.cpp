#include "frugal/model/ops/shape_ops.h"

#include <algorithm>
#include <set>

#include "model/ops/shape_util.h"

namespace frugal::ops {

namespace {

constexpr int64_t kMaxValues = 1024;  // constants up to this size carry their values

// Axes of Squeeze/Unsqueeze: the attribute before opset 13, input 1 since.
std::optional<Dims> axes_of(const std::optional<Dims>& attr, const Shapes& in) {
  if (attr) return attr;
  if (const ValueShape* a = opt(in, 1)) {
    if (!a->ints) bad("axes '" + a->name + "' are not a constant");
    return *a->ints;
  }
  return std::nullopt;
}

ValueShape with_ints(ValueShape y, const ValueShape& x) {
  y.ints = x.ints;
  return y;
}

}  // namespace

std::vector<ValueShape> Flatten::shape(const Shapes& in) const {
  const ValueShape& x = need(in, 0, "input");
  const int64_t r = static_cast<int64_t>(x.dims.size());
  if (axis < -r || axis > r)
    bad("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(r));
  const size_t a = static_cast<size_t>(axis < 0 ? axis + r : axis);
  return outputs({value({product(x.dims, 0, a), product(x.dims, a)}, x.dtype)});
}

Dims Reshape::resolve(const ValueShape& x, const Dims& want) const {
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
  return out;
}

std::vector<ValueShape> Reshape::shape(const Shapes& in) const {
  const ValueShape& x = need(in, 0, "data");
  const ValueShape& s = need(in, 1, "shape");
  if (!s.ints)
    bad("target shape '" + s.name +
        "' is not a constant (an initializer, a Constant node, or computed from Shape)");
  return outputs({with_ints(value(resolve(x, *s.ints), x.dtype), x)});
}

Concat::Concat(const Node& n, int64_t opset) : Op(n, opset), axis(n.attr_int("axis", 0)) {
  if (!n.has_attr("axis")) bad("attribute 'axis' is required");
}

std::vector<ValueShape> Concat::shape(const Shapes& in) const {
  std::vector<const ValueShape*> xs;
  for (const ValueShape& v : in)
    if (v.present) xs.push_back(&v);
  if (xs.empty()) bad("Concat needs at least one input");
  const int64_t r = static_cast<int64_t>(xs[0]->dims.size());
  if (r == 0) bad("Concat inputs must have rank >= 1");
  const size_t a = static_cast<size_t>(norm_axis(axis, r, "axis"));
  Dims out = xs[0]->dims;
  out[a] = 0;
  bool all_ints = true;
  std::vector<int64_t> ints;
  for (const ValueShape* v : xs) {
    if (v->dims.size() != out.size())
      bad("input '" + v->name + "' " + str(v->dims) + " has a different rank than '" + xs[0]->name + "' " +
          str(xs[0]->dims));
    for (size_t i = 0; i < out.size(); ++i)
      if (i != a && v->dims[i] != xs[0]->dims[i])
        bad("input '" + v->name + "' " + str(v->dims) + " differs from '" + xs[0]->name + "' " +
            str(xs[0]->dims) + " outside the concatenation axis " + std::to_string(a));
    out[a] = add(out[a], v->dims[a]);
    if (v->ints && r == 1)
      ints.insert(ints.end(), v->ints->begin(), v->ints->end());
    else
      all_ints = false;
  }
  ValueShape y = value(out, xs[0]->dtype);
  if (all_ints) y.ints = ints;
  return outputs({y});
}

std::vector<ValueShape> Transpose::shape(const Shapes& in) const {
  const ValueShape& x = need(in, 0, "data");
  const size_t r = x.dims.size();
  Dims p(r);
  for (size_t i = 0; i < r; ++i) p[i] = static_cast<int64_t>(r - 1 - i);
  if (perm) p = *perm;
  Dims sorted = p;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < r; ++i)
    if (sorted.size() != r || sorted[i] != static_cast<int64_t>(i))
      bad("attribute 'perm' " + str(p) + " is not a permutation of the axes of '" + x.name + "' " +
          str(x.dims));
  Dims out(r);
  for (size_t i = 0; i < r; ++i) out[i] = x.dims[static_cast<size_t>(p[i])];
  return outputs({value(out, x.dtype)});
}

std::vector<ValueShape> Squeeze::shape(const Shapes& in) const {
  const ValueShape& x = need(in, 0, "data");
  const std::optional<Dims> a = axes_of(axes, in);
  const int64_t r = static_cast<int64_t>(x.dims.size());
  std::set<int64_t> drop;
  if (a) {
    for (int64_t v : *a) {
      const int64_t i = norm_axis(v, r, "axis");
      if (x.dims[static_cast<size_t>(i)] != 1)
        bad("cannot squeeze axis " + std::to_string(v) + " of '" + x.name + "' " + str(x.dims) +
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
  return outputs({with_ints(value(out, x.dtype), x)});
}

std::vector<ValueShape> Unsqueeze::shape(const Shapes& in) const {
  const ValueShape& x = need(in, 0, "data");
  const std::optional<Dims> a = axes_of(axes, in);
  if (!a) bad("axes are required");
  const int64_t r = static_cast<int64_t>(x.dims.size() + a->size());
  std::set<int64_t> at;
  for (int64_t v : *a)
    if (!at.insert(norm_axis(v, r, "axis")).second) bad("axis " + std::to_string(v) + " is given twice");
  Dims out;
  size_t k = 0;
  for (int64_t i = 0; i < r; ++i) out.push_back(at.count(i) ? 1 : x.dims[k++]);
  return outputs({with_ints(value(out, x.dtype), x)});
}

std::vector<ValueShape> Pad::shape(const Shapes& in) const {
  const ValueShape& x = need(in, 0, "data");
  Dims p;
  if (pads) {
    p = *pads;
  } else {
    const ValueShape& v = need(in, 1, "pads");
    if (!v.ints) bad("pads '" + v.name + "' are not a constant");
    p = *v.ints;
  }
  const size_t r = x.dims.size();
  if (p.size() != 2 * r)
    bad("pads " + str(p) + " have " + std::to_string(p.size()) + " values, expected " +
        std::to_string(2 * r) + " for input '" + x.name + "' " + str(x.dims));
  Dims out(r);
  for (size_t i = 0; i < r; ++i) {
    out[i] = add(add(x.dims[i], p[i]), p[i + r]);
    if (out[i] < 0)
      bad("pads " + str(p) + " remove more than input '" + x.name + "' " + str(x.dims) + " holds");
  }
  return outputs({value(out, x.dtype)});
}

std::vector<ValueShape> Gather::shape(const Shapes& in) const {
  const ValueShape& d = need(in, 0, "data");
  const ValueShape& idx = need(in, 1, "indices");
  if (d.dims.empty()) bad("input '" + d.name + "' must have rank >= 1");
  const size_t a = static_cast<size_t>(norm_axis(axis, static_cast<int64_t>(d.dims.size()), "axis"));
  Dims out(d.dims.begin(), d.dims.begin() + static_cast<long>(a));
  out.insert(out.end(), idx.dims.begin(), idx.dims.end());
  out.insert(out.end(), d.dims.begin() + static_cast<long>(a) + 1, d.dims.end());
  ValueShape y = value(out, d.dtype);
  if (idx.ints) {
    const int64_t size = d.dims[a];
    std::vector<int64_t> picked;
    for (int64_t i : *idx.ints) {
      if (i < -size || i >= size)
        bad("index " + std::to_string(i) + " is out of range for axis " + std::to_string(a) + " of '" +
            d.name + "' " + str(d.dims));
      if (d.ints && d.dims.size() == 1)
        picked.push_back((*d.ints)[static_cast<size_t>(i < 0 ? i + size : i)]);
    }
    if (d.ints && d.dims.size() == 1) y.ints = picked;
  }
  return outputs({y});
}

std::vector<ValueShape> Shape::shape(const Shapes& in) const {
  const ValueShape& x = need(in, 0, "data");
  const int64_t r = static_cast<int64_t>(x.dims.size());
  int64_t s = start, e = end.value_or(r);
  if (s < 0) s += r;
  if (e < 0) e += r;
  s = std::clamp<int64_t>(s, 0, r);
  e = std::clamp<int64_t>(e, 0, r);
  Dims vals;
  for (int64_t i = s; i < e; ++i) vals.push_back(x.dims[static_cast<size_t>(i)]);
  ValueShape y = value({static_cast<int64_t>(vals.size())}, DType::Int64);
  y.ints = vals;
  return outputs({y});
}

Constant::Constant(const Node& n, int64_t opset) : Op(n, opset) {
  if (const Attribute* a = n.attr("value")) {
    if (a->kind != Attribute::Kind::Tensor || !a->t) bad("attribute 'value' is not a tensor");
    const TensorDesc& t = *a->t;
    value_ = value(known_dims(t.shape), t.dtype);
    if ((t.dtype == DType::Int64 || t.dtype == DType::Int32) && product(value_.dims) <= kMaxValues)
      value_.ints = t.as_int64();
    if ((t.dtype == DType::Float32 || t.dtype == DType::Float64) && product(value_.dims) <= kMaxValues) {
      const std::vector<float> f = t.as_float();
      value_.floats = std::vector<double>(f.begin(), f.end());
    }
  } else if (const Attribute* f = n.attr("value_float")) {
    value_ = value({}, DType::Float32);
    value_.floats = std::vector<double>{f->f};
  } else if (const Attribute* fs = n.attr("value_floats")) {
    value_ = value({static_cast<int64_t>(fs->floats.size())}, DType::Float32);
    value_.floats = std::vector<double>(fs->floats.begin(), fs->floats.end());
  } else if (const Attribute* i = n.attr("value_int")) {
    value_ = value({}, DType::Int64);
    value_.ints = std::vector<int64_t>{i->i};
  } else if (const Attribute* is = n.attr("value_ints")) {
    value_ = value({static_cast<int64_t>(is->ints.size())}, DType::Int64);
    value_.ints = is->ints;
  } else {
    bad("no supported value attribute (value, value_float(s), value_int(s))");
  }
}

std::vector<ValueShape> Constant::shape(const Shapes&) const { return outputs({value_}); }

std::vector<ValueShape> Identity::shape(const Shapes& in) const {
  const ValueShape& x = need(in, 0, "input");
  ValueShape y = value(x.dims, x.dtype);
  y.ints = x.ints;
  y.floats = x.floats;
  return outputs({y});
}

std::vector<ValueShape> Dropout::shape(const Shapes& in) const {
  const ValueShape& x = need(in, 0, "data");
  return outputs({value(x.dims, x.dtype), value(x.dims, DType::Bool)});
}

Cast::Cast(const Node& n, int64_t opset) : Op(n, opset), to(static_cast<DType>(n.attr_int("to", 0))) {
  if (!n.has_attr("to")) bad("attribute 'to' is required");
  if (dtype_size(to) == 0 && to != DType::String)
    bad("attribute 'to' = " + std::to_string(static_cast<int>(to)) + " is not a known element type");
}

std::vector<ValueShape> Cast::shape(const Shapes& in) const {
  const ValueShape& x = need(in, 0, "input");
  ValueShape y = value(x.dims, to);
  if (to == DType::Int64 || to == DType::Int32) y.ints = x.ints;
  return outputs({y});
}

}  // namespace frugal::ops
