#include "common/window.h"

#include <algorithm>

#include "frugal/error.h"
#include "frugal/model/ops/conv.h"
#include "frugal/model/ops/pool.h"

namespace frugal::exec {

namespace {

int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

const ops::Window& window_of(const KernelSpec& s) {
  if (const auto* c = dynamic_cast<const ops::Conv*>(s.op)) return c->window;
  return s.op_as<ops::WindowPool>().window;
}

}  // namespace

Window Window::from_node(const KernelSpec& s, const Dims& input, const Dims& kernel) {
  const size_t r = kernel.size();
  if (r != 1 && r != 2) unsupported(s, std::to_string(r) + "-D windows are not supported (1-D and 2-D are)");
  ValueShape x;
  x.name = s.inputs.empty() ? std::string() : s.inputs[0].name;
  x.dims = input;
  std::vector<ops::Window::Axis> axes;
  try {
    axes = window_of(s).geometry(x, kernel);
  } catch (const Error& e) {
    fail(s, e.what());
  }
  Window w;
  w.spatial_rank = int(r);
  const ops::Window::Axis& a = axes.back();  // the width
  w.W = a.in;
  w.kw = a.kernel;
  w.sw = a.stride;
  w.dw = a.dilation;
  w.pl = a.pad_begin;
  w.pr = a.pad_end;
  w.Wo = a.out;
  if (r == 2) {
    const ops::Window::Axis& h = axes[0];
    w.H = h.in;
    w.kh = h.kernel;
    w.sh = h.stride;
    w.dh = h.dilation;
    w.pt = h.pad_begin;
    w.pb = h.pad_end;
    w.Ho = h.out;
  }
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
  const ops::Conv& op = s.op_as<ops::Conv>();
  if (s.node->attr_int("ceil_mode", 0) != 0) fail(s, "ceil_mode is not an attribute of Conv");
  ConvShape c;
  const InputInfo& x = required_input(s, 0, "input X");
  const InputInfo& w = required_input(s, 1, "weights W");
  c.weights = constant_floats(s, 1, "weights W");
  const Dims& wd = w.dims;  // the op's shape function checked W, kernel_shape, group and B against X
  c.window = Window::from_node(s, x.dims, Dims(wd.begin() + 2, wd.end()));
  c.group = op.group;
  c.C = x.dims[1];
  c.M = wd[0];
  c.Cg = c.C / c.group;
  c.Mg = c.M / c.group;
  if (has_input(s, 2)) c.bias = constant_floats(s, 2, "bias B");
  return c;
}

}  // namespace frugal::exec
