#include "frugal/model/ops/pool.h"

#include "model/ops/shape_util.h"

namespace frugal::ops {

WindowPool::WindowPool(const Node& n, int64_t opset) : Op(n, opset), window(n, true) {
  if (!window.kernel_shape) bad("attribute 'kernel_shape' is required");
}

std::vector<ValueShape> WindowPool::shape(const std::vector<ValueShape>& in) const {
  const ValueShape& x = need(in, 0, "X");
  if (x.dims.size() < 3)
    bad("input '" + x.name + "' has shape " + str(x.dims) + ", pooling needs [N, C, D1, ...]");
  if (kernel().size() != x.dims.size() - 2)
    bad("attribute 'kernel_shape' " + str(kernel()) + " does not match input '" + x.name + "' " +
        str(x.dims));
  Dims out{x.dims[0], x.dims[1]};
  for (const Window::Axis& a : window.geometry(x, kernel())) out.push_back(a.out);
  return outputs({value(out, x.dtype), value(out, DType::Int64)});
}

std::vector<ValueShape> GlobalPool::shape(const std::vector<ValueShape>& in) const {
  const ValueShape& x = need(in, 0, "X");
  if (x.dims.size() < 3)
    bad("input '" + x.name + "' has shape " + str(x.dims) + ", pooling needs [N, C, D1, ...]");
  Dims out(x.dims.size(), 1);
  out[0] = x.dims[0];
  out[1] = x.dims[1];
  return outputs({value(out, x.dtype)});
}

}  // namespace frugal::ops
