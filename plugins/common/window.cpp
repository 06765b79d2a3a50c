#include "common/window.h"

#include <algorithm>

namespace frugal::exec {

namespace {

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

// Output size and pads along one axis.
void axis_geometry(const KernelSpec& s, const std::string& auto_pad, bool ceil_mode, int64_t in, int64_t k,
                   int64_t stride, int64_t dil, int64_t& pad_begin, int64_t& pad_end, int64_t& out) {
  const int64_t span = (k - 1) * dil + 1;
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    out = ceil_div(in, stride);
    const int64_t total = std::max<int64_t>(0, (out - 1) * stride + span - in);
    pad_begin = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
    pad_end = total - pad_begin;
    return;
  }
  if (auto_pad == "VALID")
    pad_begin = pad_end = 0;
  else if (auto_pad != "NOTSET" && !auto_pad.empty())
    fail(s, "unknown auto_pad '" + auto_pad + "'");
  const int64_t room = in + pad_begin + pad_end - span;
  if (room < 0)
    fail(s, "window of " + std::to_string(span) + " does not fit the padded input of " +
                std::to_string(in + pad_begin + pad_end));
  out = (ceil_mode ? ceil_div(room, stride) : room / stride) + 1;
  // ceil_mode: a last window that would start in the end padding is dropped
  // (the rule of PyTorch and of the ONNX reference).
  if (ceil_mode && (out - 1) * stride >= in + pad_begin) --out;
}

}  // namespace

Window Window::from_node(const KernelSpec& s, const Dims& input, const Dims& kernel, bool allow_ceil_mode) {
  const Node& n = *s.node;
  const size_t r = kernel.size();
  if (r != 1 && r != 2) unsupported(s, std::to_string(r) + "-D windows are not supported (1-D and 2-D are)");
  if (input.size() != r + 2)
    fail(s, "input of rank " + std::to_string(input.size()) + " does not match a " + std::to_string(r) +
                "-D window");
  auto list = [&](const char* name, int64_t dflt, size_t len) {
    std::vector<int64_t> v = n.attr_ints(name, std::vector<int64_t>(len, dflt));
    if (v.size() != len)
      fail(s, std::string("attribute ") + name + " has " + std::to_string(v.size()) + " values, expected " +
                  std::to_string(len));
    return v;
  };
  const std::vector<int64_t> strides = list("strides", 1, r), dil = list("dilations", 1, r),
                             pads = list("pads", 0, 2 * r);
  for (size_t i = 0; i < r; ++i) {
    if (strides[i] < 1) fail(s, "strides must be >= 1");
    if (dil[i] < 1) fail(s, "dilations must be >= 1");
    if (kernel[i] < 1) fail(s, "kernel size must be >= 1");
  }
  for (int64_t p : pads)
    if (p < 0) fail(s, "pads must be >= 0");
  const bool ceil_mode = n.attr_int("ceil_mode", 0) != 0;
  if (ceil_mode && !allow_ceil_mode) fail(s, "ceil_mode is not an attribute of this op");
  const std::string auto_pad = n.attr_string("auto_pad", "NOTSET");

  Window w;
  w.spatial_rank = int(r);
  int64_t out_h = 1;
  if (r == 2) {
    w.H = input[2];
    w.W = input[3];
    w.kh = kernel[0];
    w.kw = kernel[1];
    w.sh = strides[0];
    w.sw = strides[1];
    w.dh = dil[0];
    w.dw = dil[1];
    w.pt = pads[0];
    w.pl = pads[1];
    w.pb = pads[2];
    w.pr = pads[3];
    axis_geometry(s, auto_pad, ceil_mode, w.H, w.kh, w.sh, w.dh, w.pt, w.pb, out_h);
    w.Ho = out_h;
  } else {
    w.W = input[2];
    w.kw = kernel[0];
    w.sw = strides[0];
    w.dw = dil[0];
    w.pl = pads[0];
    w.pr = pads[1];
  }
  axis_geometry(s, auto_pad, ceil_mode, w.W, w.kw, w.sw, w.dw, w.pl, w.pr, w.Wo);
  return w;
}

void Window::valid_cols(int64_t j, int64_t& lo, int64_t& hi) const {
  // iw = ow*sw - pl + j*dw in [0, W)
  const int64_t off = j * dw - pl;
  lo = std::min<int64_t>(Wo, std::max<int64_t>(0, ceil_div(-off, sw)));
  hi = std::min<int64_t>(Wo, floor_div(W - 1 - off, sw) + 1);
  if (hi < lo) hi = lo;
}

ConvShape ConvShape::from_spec(const KernelSpec& s) {
  ConvShape c;
  const InputInfo& x = required_input(s, 0, "input X");
  const InputInfo& w = required_input(s, 1, "weights W");
  c.weights = constant_floats(s, 1, "weights W");
  const Dims& wd = w.dims;
  if (wd.size() < 3) fail(s, "weights W must have rank >= 3, got " + dims_string(wd));
  if (x.dims.size() != wd.size())
    fail(s, "input X " + dims_string(x.dims) + " and weights W " + dims_string(wd) + " differ in rank");
  const Dims kernel(wd.begin() + 2, wd.end());
  const std::vector<int64_t> ks = s.node->attr_ints("kernel_shape", kernel);
  if (ks != kernel)
    fail(s, "kernel_shape " + dims_string(ks) + " does not match weights W " + dims_string(wd));
  c.window = Window::from_node(s, x.dims, kernel, false);
  c.group = s.node->attr_int("group", 1);
  c.C = x.dims[1];
  c.M = wd[0];
  if (c.group < 1 || c.C % c.group != 0 || c.M % c.group != 0)
    fail(s, "group " + std::to_string(c.group) + " does not divide the " + std::to_string(c.C) +
                " input and " + std::to_string(c.M) + " output channels");
  c.Cg = c.C / c.group;
  c.Mg = c.M / c.group;
  if (wd[1] != c.Cg)
    fail(s, "weights W " + dims_string(wd) + " expect " + std::to_string(wd[1]) +
                " channels per group, input X " + dims_string(x.dims) + " gives " + std::to_string(c.Cg));
  if (has_input(s, 2)) {
    c.bias = constant_floats(s, 2, "bias B");
    if (int64_t(c.bias.size()) != c.M)
      fail(s, "bias B has " + std::to_string(c.bias.size()) + " values, expected " + std::to_string(c.M));
  }
  return c;
}

}  // namespace frugal::exec
