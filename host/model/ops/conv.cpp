#include "frugal/model/ops/conv.h"

#include "model/ops/shape_util.h"

namespace frugal::ops {

Conv::Conv(const Node& n, int64_t opset) : Op(n, opset), window(n, false), group(n.attr_int("group", 1)) {
  if (group <= 0) bad("attribute 'group' must be positive");
}

std::vector<ValueShape> Conv::shape(const std::vector<ValueShape>& in) const {
  const ValueShape& x = need(in, 0, "X");
  const ValueShape& w = need(in, 1, "W");
  if (x.dims.size() < 3)
    bad("input '" + x.name + "' has shape " + str(x.dims) + ", Conv needs [N, C, D1, ...]");
  if (w.dims.size() != x.dims.size())
    bad("weight '" + w.name + "' has shape " + str(w.dims) + ", which does not match the rank of input '" +
        x.name + "' " + str(x.dims));
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
  const Dims kernel(w.dims.begin() + 2, w.dims.end());
  if (window.kernel_shape && *window.kernel_shape != kernel)
    bad("attribute 'kernel_shape' " + str(*window.kernel_shape) + " differs from weight '" + w.name + "' " +
        str(w.dims));
  if (const ValueShape* b = opt(in, 2))
    if (b->dims != Dims{m})
      bad("bias '" + b->name + "' has shape " + str(b->dims) + ", expected [" + std::to_string(m) + "]");
  Dims out{x.dims[0], m};
  for (const Window::Axis& a : window.geometry(x, kernel)) out.push_back(a.out);
  return outputs({value(out, x.dtype)});
}

int64_t Conv::macs(const std::vector<ValueShape>& in, const std::vector<ValueShape>& out) const {
  // Each output element needs (C / group) * prod(kernel) multiply-accumulates.
  return mul(product(out[0].dims), product(in[1].dims, 1));
}

}  // namespace frugal::ops
