#include "frugal/model/ops/normalization.h"

#include "model/ops/shape_util.h"

namespace frugal::ops {

BatchNormalization::BatchNormalization(const Node& n, int64_t opset)
    : Op(n, opset),
      epsilon(n.attr_float("epsilon", 1e-5f)),
      training_mode(n.attr_int("training_mode", 0) != 0),
      is_test(opset >= 7 || n.attr_int("is_test", 0) != 0),
      spatial(opset >= 9 || n.attr_int("spatial", 1) != 0) {}

std::vector<ValueShape> BatchNormalization::shape(const std::vector<ValueShape>& in) const {
  const ValueShape& x = need(in, 0, "X");
  if (x.dims.size() < 2)
    bad("input '" + x.name + "' has shape " + str(x.dims) + ", BatchNormalization needs [N, C, ...]");
  const int64_t c = x.dims[1];
  static const char* roles[] = {"X", "scale", "B", "input_mean", "input_var"};
  for (size_t i = 1; i < 5; ++i) {
    const ValueShape& p = need(in, i, roles[i]);
    if (p.dims != Dims{c})
      bad("input '" + p.name + "' (" + roles[i] + ") has shape " + str(p.dims) + ", expected [" +
          std::to_string(c) + "] for input '" + x.name + "' " + str(x.dims));
  }
  std::vector<ValueShape> outs{value(x.dims, x.dtype)};
  for (size_t i = 1; i < num_outputs(); ++i) outs.push_back(value({c}, in[3].dtype));  // running/saved stats
  return outputs(outs);
}

LRN::LRN(const Node& n, int64_t opset)
    : Op(n, opset),
      size(n.attr_int("size", 0)),
      alpha(n.attr_float("alpha", 1e-4f)),
      beta(n.attr_float("beta", 0.75f)),
      bias(n.attr_float("bias", 1.0f)) {
  if (size <= 0) bad("attribute 'size' must be positive");
}

std::vector<ValueShape> LRN::shape(const std::vector<ValueShape>& in) const {
  const ValueShape& x = need(in, 0, "X");
  if (x.dims.size() < 3)
    bad("input '" + x.name + "' has shape " + str(x.dims) + ", LRN needs [N, C, D1, ...]");
  return outputs({value(x.dims, x.dtype)});
}

std::vector<ValueShape> SoftmaxBase::shape(const std::vector<ValueShape>& in) const {
  const ValueShape& x = need(in, 0, "input");
  if (!x.dims.empty()) norm_axis(axis, static_cast<int64_t>(x.dims.size()), "axis");
  return outputs({value(x.dims, x.dtype)});
}

}  // namespace frugal::ops
