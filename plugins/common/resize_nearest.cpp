#include "common/resize_nearest.h"

#include <cmath>

#include "frugal/model/ops/resize.h"

namespace frugal::exec {

namespace {

// x in the input's coordinates for output coordinate x_out (ONNX Resize;
// `length` is scale * in_size, as the ONNX reference computes it).
double original_coordinate(double x_out, int64_t in_size, double scale, const std::string& mode) {
  const double length = scale * double(in_size);
  if (mode == "align_corners") return length == 1.0 ? 0.0 : x_out * double(in_size - 1) / (length - 1.0);
  if (mode == "asymmetric") return x_out / scale;
  if (mode == "pytorch_half_pixel") return length == 1.0 ? -0.5 : (x_out + 0.5) / scale - 0.5;
  if (mode == "tf_half_pixel_for_nn") return (x_out + 0.5) / scale;
  return (x_out + 0.5) / scale - 0.5;  // half_pixel
}

}  // namespace

int64_t nearest_index(int64_t out_index, int64_t in_size, int64_t out_size, double scale,
                      const std::string& coordinate_mode, const std::string& nearest_mode) {
  (void)out_size;
  const double x = original_coordinate(double(out_index), in_size, scale, coordinate_mode);
  const double lo = std::floor(x), frac = x - lo;
  int64_t i = int64_t(lo);
  if (frac != 0.0) {
    if (nearest_mode == "ceil" || (nearest_mode == "round_prefer_ceil" && frac >= 0.5) ||
        (nearest_mode == "round_prefer_floor" && frac > 0.5))
      ++i;
  }
  return i < 0 ? 0 : i >= in_size ? in_size - 1 : i;  // values beyond the edge repeat it
}

ResizeNearest ResizeNearest::from_spec(const KernelSpec& s) {
  const ops::Resize& op = s.op_as<ops::Resize>();
  if (op.mode != "nearest") unsupported(s, "mode '" + op.mode + "' is not supported (nearest is)");
  if (op.coordinate_transformation_mode == "tf_crop_and_resize")
    unsupported(s, "coordinate_transformation_mode tf_crop_and_resize is not supported");
  const Dims& x = required_input(s, 0, "input X").dims;
  const Dims& y = s.output;
  if (x.size() < 3 || y.size() != x.size() || y[0] != x[0] || y[1] != x[1])
    unsupported(
        s, "only spatial axes may be resized (input " + dims_string(x) + ", output " + dims_string(y) + ")");
  std::vector<double> scales;
  const size_t si = op.scales_input();
  if (has_input(s, si) && product(s.inputs[si].dims) > 0) {
    const std::vector<float> v = constant_floats(s, si, "scales");
    scales.assign(v.begin(), v.end());
  } else {
    for (size_t k = 0; k < x.size(); ++k) scales.push_back(double(y[k]) / double(x[k]));
  }
  ResizeNearest r;
  r.planes = x[0] * x[1];
  r.in_plane = product(x, 2);
  // Per spatial axis the source index of each output index; then all positions.
  r.source.assign(1, 0);
  int64_t in_stride = r.in_plane;
  for (size_t k = 2; k < x.size(); ++k) {
    in_stride /= x[k];
    std::vector<int64_t> next;
    for (int64_t base : r.source)
      for (int64_t o = 0; o < y[k]; ++o)
        next.push_back(base + in_stride * nearest_index(o, x[k], y[k], scales[k],
                                                        op.coordinate_transformation_mode, op.nearest_mode));
    r.source = std::move(next);
  }
  return r;
}

}  // namespace frugal::exec
