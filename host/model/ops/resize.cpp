#include "frugal/model/ops/resize.h"

#include <cmath>

#include "model/ops/shape_util.h"

namespace frugal::ops {

namespace {

// floor(dim * scale) per axis, in float as ONNX's own shape inference computes it.
Dims scaled(const ValueShape& x, const std::vector<double>& scales, const std::vector<double>* roi) {
  if (scales.size() != x.dims.size())
    bad("scales have " + std::to_string(scales.size()) + " values, input '" + x.name + "' " + str(x.dims) +
        " has rank " + std::to_string(x.dims.size()));
  Dims out(x.dims.size());
  for (size_t i = 0; i < out.size(); ++i) {
    if (!(scales[i] > 0))
      bad("scale " + std::to_string(scales[i]) + " on axis " + std::to_string(i) + " is not positive");
    float extent = static_cast<float>(x.dims[i]);
    if (roi) extent *= static_cast<float>((*roi)[i + out.size()] - (*roi)[i]);
    out[i] = static_cast<int64_t>(std::floor(extent * static_cast<float>(scales[i])));
  }
  return out;
}

bool empty_or_absent(const ValueShape* v) { return !v || product(v->dims) == 0; }

}  // namespace

Resize::Resize(const Node& n, int64_t opset)
    : Op(n, opset),
      mode(n.attr_string("mode", "nearest")),
      coordinate_transformation_mode(
          n.attr_string("coordinate_transformation_mode", opset < 11 ? "asymmetric" : "half_pixel")),
      nearest_mode(n.attr_string("nearest_mode", "round_prefer_floor")),
      cubic_coeff_a(n.attr_float("cubic_coeff_a", -0.75f)),
      extrapolation_value(n.attr_float("extrapolation_value", 0.0f)),
      exclude_outside(n.attr_int("exclude_outside", 0) != 0) {
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    bad("attribute 'mode' has unknown value '" + mode + "'");
}

std::vector<ValueShape> Resize::shape(const std::vector<ValueShape>& in) const {
  const ValueShape& x = need(in, 0, "X");
  const ValueShape* sizes = opset() < 11 ? nullptr : opt(in, sizes_input());
  if (!empty_or_absent(sizes)) {
    if (!sizes->ints) bad("sizes '" + sizes->name + "' are not a constant");
    if (sizes->ints->size() != x.dims.size())
      bad("sizes " + str(*sizes->ints) + " do not match the rank of input '" + x.name + "' " + str(x.dims));
    return outputs({value(*sizes->ints, x.dtype)});
  }
  const ValueShape* scales = opt(in, scales_input());
  if (empty_or_absent(scales)) bad("neither scales nor sizes are given");
  if (!scales->floats) bad("scales '" + scales->name + "' are not a constant");
  const ValueShape* roi = coordinate_transformation_mode == "tf_crop_and_resize" ? opt(in, 1) : nullptr;
  if (roi && (!roi->floats || roi->floats->size() != 2 * x.dims.size()))
    bad("roi '" + roi->name + "' must be a constant of " + std::to_string(2 * x.dims.size()) + " values");
  return outputs({value(scaled(x, *scales->floats, roi ? &*roi->floats : nullptr), x.dtype)});
}

Upsample::Upsample(const Node& n, int64_t opset) : Op(n, opset), mode(n.attr_string("mode", "nearest")) {
  if (const Attribute* a = n.attr("scales")) scales = a->floats;
}

std::vector<ValueShape> Upsample::shape(const std::vector<ValueShape>& in) const {
  const ValueShape& x = need(in, 0, "X");
  if (!scales.empty())
    return outputs({value(scaled(x, std::vector<double>(scales.begin(), scales.end()), nullptr), x.dtype)});
  const ValueShape& s = need(in, 1, "scales");
  if (!s.floats) bad("scales '" + s.name + "' are not a constant");
  return outputs({value(scaled(x, *s.floats, nullptr), x.dtype)});
}

}  // namespace frugal::ops
