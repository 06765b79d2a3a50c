#include "frugal/model/ops/activation.h"

#include "model/ops/shape_util.h"

namespace frugal::ops {

std::vector<ValueShape> Activation::shape(const std::vector<ValueShape>& in) const {
  const ValueShape& x = need(in, 0, "input");
  return outputs({value(x.dims, x.dtype)});
}

std::vector<ValueShape> Clip::shape(const std::vector<ValueShape>& in) const {
  const ValueShape& x = need(in, 0, "input");
  for (size_t i = 1; i < 3; ++i)
    if (const ValueShape* m = opt(in, i))
      if (product(m->dims) != 1)
        bad("input '" + m->name + "' (min/max) must be a scalar, has shape " + str(m->dims));
  return outputs({value(x.dims, x.dtype)});
}

std::vector<ValueShape> Unary::shape(const std::vector<ValueShape>& in) const {
  const ValueShape& x = need(in, 0, "input");
  return outputs({value(x.dims, x.dtype)});
}

}  // namespace frugal::ops
