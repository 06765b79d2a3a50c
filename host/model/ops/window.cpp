#include "frugal/model/ops/window.h"

#include <algorithm>

#include "model/ops/shape_util.h"

namespace frugal::ops {

namespace {

// `v`, or `n` copies of `dflt` when empty; Error when its length is not n.
Dims per_axis(const Dims& v, const char* name, int64_t dflt, size_t n) {
  if (v.empty()) return Dims(n, dflt);
  if (v.size() != n)
    bad(std::string("attribute '") + name + "' has " + std::to_string(v.size()) + " values, expected " +
        std::to_string(n));
  return v;
}

void same_padding(const std::string& auto_pad, Window::Axis& a, int64_t extent) {
  a.out = a.in / a.stride + (a.in % a.stride != 0);
  const int64_t total = std::max<int64_t>(0, add(mul(a.out - 1, a.stride), extent) - a.in);
  a.pad_begin = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
  a.pad_end = total - a.pad_begin;
}

}  // namespace

Window::Window(const Node& n, bool pooling) {
  if (n.has_attr("kernel_shape")) kernel_shape = n.attr_ints("kernel_shape", {});
  strides = n.attr_ints("strides", {});
  dilations = n.attr_ints("dilations", {});
  pads = n.attr_ints("pads", {});
  auto_pad = n.attr_string("auto_pad", "NOTSET");
  if (auto_pad != "NOTSET" && auto_pad != "SAME_UPPER" && auto_pad != "SAME_LOWER" && auto_pad != "VALID")
    bad("attribute 'auto_pad' has unknown value '" + auto_pad + "'");
  ceil_mode = pooling && n.attr_int("ceil_mode", 0) != 0;
}

std::vector<Window::Axis> Window::geometry(const ValueShape& x, const std::vector<int64_t>& kernel) const {
  const size_t ns = kernel.size();
  if (x.dims.size() != ns + 2)
    bad("input '" + x.name + "' " + str(x.dims) + " does not match a " + std::to_string(ns) + "-D window");
  const Dims s = per_axis(strides, "strides", 1, ns), d = per_axis(dilations, "dilations", 1, ns);
  const Dims p = per_axis(pads, "pads", 0, 2 * ns);
  std::vector<Axis> axes(ns);
  for (size_t i = 0; i < ns; ++i) {
    Axis& a = axes[i];
    a.in = x.dims[2 + i];
    a.kernel = kernel[i];
    a.stride = s[i];
    a.dilation = d[i];
    if (a.kernel <= 0 || a.stride <= 0 || a.dilation <= 0)
      bad("kernel, strides and dilations must be positive");
    if (p[i] < 0 || p[i + ns] < 0) bad("attribute 'pads' has a negative value");
    const int64_t extent = add(mul(a.kernel - 1, a.dilation), 1);  // of the dilated kernel
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      same_padding(auto_pad, a, extent);
      continue;
    }
    a.pad_begin = auto_pad == "VALID" ? 0 : p[i];
    a.pad_end = auto_pad == "VALID" ? 0 : p[i + ns];
    const int64_t span = add(add(a.in, a.pad_begin), a.pad_end) - extent;  // terms >= 0: cannot overflow
    if (span < 0)
      bad("input '" + x.name + "' " + str(x.dims) + " is smaller than the kernel (extent " +
          std::to_string(extent) + " in spatial dimension " + std::to_string(i) + ")");
    a.out = span / a.stride + (ceil_mode && span % a.stride != 0) + 1;
    // As PyTorch and the ONNX reference: a last window that starts in the end padding is dropped.
    if (ceil_mode && a.out > 1 && mul(a.out - 1, a.stride) >= a.in + a.pad_begin) --a.out;
  }
  return axes;
}

}  // namespace frugal::ops
