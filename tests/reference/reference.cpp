#include "reference.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <deque>
#include <functional>
#include <limits>
#include <set>

#include "frugal/error.h"

namespace frugal {

namespace {

int64_t count_of(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::string dims_str(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

RefTensor make(std::vector<int64_t> dims, double fill = 0.0) {
  RefTensor t;
  t.data.assign(static_cast<size_t>(count_of(dims)), fill);
  t.dims = std::move(dims);
  return t;
}

// Everything one node needs: its inputs as float64, attributes, and a way to fail
// with a message naming it.
class NodeContext {
 public:
  NodeContext(const Node& node, const Graph& g, const RefValues& values, int opset)
      : node_(node), graph_(g), values_(values), opset_(opset) {}

  [[noreturn]] void fail(const std::string& msg) const {
    throw Error("reference: node '" + node_.name + "' (" + node_.op_type + "): " + msg);
  }
  const Node& node() const { return node_; }
  int opset() const { return opset_; }

  bool has(size_t i) const { return i < node_.inputs.size() && !node_.inputs[i].empty(); }
  const RefTensor& in(size_t i) {
    if (!has(i)) fail("input " + std::to_string(i) + " is missing");
    const std::string& name = node_.inputs[i];
    auto it = values_.find(name);
    if (it != values_.end()) return it->second;
    if (graph_.is_initializer(name)) {
      converted_.push_back(to_ref(graph_.tensor(name)));
      return converted_.back();
    }
    fail("input '" + name + "' has no value (not computed, not an input, not an initializer)");
  }
  const RefTensor& in_rank(size_t i, size_t min_rank, size_t max_rank) {
    const RefTensor& t = in(i);
    if (t.dims.size() < min_rank || t.dims.size() > max_rank)
      fail("input '" + node_.inputs[i] + "' has shape " + dims_str(t.dims) + "; expected rank " +
           std::to_string(min_rank) + (max_rank != min_rank ? ".." + std::to_string(max_rank) : ""));
    return t;
  }
  int64_t attr_int(const std::string& n, int64_t d) const { return node_.attr_int(n, d); }
  double attr_float(const std::string& n, double d) const {
    return node_.has_attr(n) ? static_cast<double>(node_.attr_float(n, 0.0f)) : d;
  }
  std::vector<int64_t> attr_ints(const std::string& n, const std::vector<int64_t>& d) const {
    return node_.attr_ints(n, d);
  }
  std::string attr_string(const std::string& n, const std::string& d) const {
    return node_.attr_string(n, d);
  }
  // Normalises an axis attribute against `rank` (negative counts from the end).
  size_t axis(int64_t a, size_t rank, bool allow_rank = false) const {
    const int64_t r = static_cast<int64_t>(rank);
    const int64_t v = a < 0 ? a + r : a;
    if (v < 0 || v > r || (v == r && !allow_rank))
      fail("axis " + std::to_string(a) + " out of range for rank " + std::to_string(r));
    return static_cast<size_t>(v);
  }

 private:
  const Node& node_;
  const Graph& graph_;
  const RefValues& values_;
  int opset_;
  std::deque<RefTensor> converted_;  // initializers converted for this node only
};

// ---- windows (Conv and pools) ------------------------------------------------

// One spatial axis of a sliding window.
struct Window {
  int64_t in = 1, out = 1, kernel = 1, stride = 1, dilation = 1, pad_begin = 0, pad_end = 0;
};

// Output sizes and pads from kernel_shape/strides/dilations/pads/auto_pad, as
// the ONNX operator spec defines them. In ceil mode a last window that would
// start in the end padding is dropped (the rule PyTorch, onnxruntime and the
// ONNX reference implementation follow).
std::vector<Window> windows(NodeContext& c, const std::vector<int64_t>& in_spatial,
                            const std::vector<int64_t>& kernel, bool ceil_mode) {
  const size_t r = in_spatial.size();
  const std::vector<int64_t> strides = c.attr_ints("strides", std::vector<int64_t>(r, 1));
  const std::vector<int64_t> dilations = c.attr_ints("dilations", std::vector<int64_t>(r, 1));
  const std::vector<int64_t> pads = c.attr_ints("pads", std::vector<int64_t>(2 * r, 0));
  const std::string auto_pad = c.attr_string("auto_pad", "NOTSET");
  if (kernel.size() != r || strides.size() != r || dilations.size() != r || pads.size() != 2 * r)
    c.fail("kernel_shape/strides/dilations/pads do not match " + std::to_string(r) + " spatial dims");
  std::vector<Window> w(r);
  for (size_t i = 0; i < r; ++i) {
    Window& a = w[i];
    a.in = in_spatial[i];
    a.kernel = kernel[i];
    a.stride = strides[i];
    a.dilation = dilations[i];
    if (a.kernel < 1 || a.stride < 1 || a.dilation < 1) c.fail("kernel, stride and dilation must be >= 1");
    const int64_t extent = (a.kernel - 1) * a.dilation + 1;
    if (auto_pad == "NOTSET") {
      a.pad_begin = pads[i];
      a.pad_end = pads[i + r];
      if (a.pad_begin < 0 || a.pad_end < 0) c.fail("negative pads");
      const int64_t span = a.in + a.pad_begin + a.pad_end - extent;
      if (span < 0) c.fail("window of extent " + std::to_string(extent) + " is larger than the padded input");
      a.out = (ceil_mode ? (span + a.stride - 1) / a.stride : span / a.stride) + 1;
      if (ceil_mode && (a.out - 1) * a.stride >= a.in + a.pad_begin) --a.out;
    } else if (auto_pad == "VALID") {
      if (a.in < extent) c.fail("window larger than the input with auto_pad VALID");
      a.out = (a.in - extent) / a.stride + 1;
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      a.out = (a.in + a.stride - 1) / a.stride;
      const int64_t total = std::max<int64_t>(0, (a.out - 1) * a.stride + extent - a.in);
      const int64_t small = total / 2;
      a.pad_begin = auto_pad == "SAME_UPPER" ? small : total - small;
      a.pad_end = total - a.pad_begin;
    } else {
      c.fail("unknown auto_pad '" + auto_pad + "'");
    }
  }
  return w;
}

// 1-D convs and pools run as 2-D ones with a trivial leading axis.
std::vector<Window> as_2d(std::vector<Window> w) {
  if (w.size() == 1) w.insert(w.begin(), Window{});
  return w;
}

// ---- ops -----------------------------------------------------------------------

RefTensor conv(NodeContext& c) {
  const RefTensor& x = c.in_rank(0, 3, 4);
  const RefTensor& w = c.in_rank(1, x.dims.size(), x.dims.size());
  const int64_t N = x.dims[0], C = x.dims[1], M = w.dims[0];
  const int64_t group = c.attr_int("group", 1);
  if (group < 1 || C % group || M % group || w.dims[1] != C / group)
    c.fail("input " + dims_str(x.dims) + ", weight " + dims_str(w.dims) + " and group " +
           std::to_string(group) + " do not match");
  const std::vector<int64_t> spatial(x.dims.begin() + 2, x.dims.end());
  const std::vector<int64_t> kernel =
      c.attr_ints("kernel_shape", std::vector<int64_t>(w.dims.begin() + 2, w.dims.end()));
  if (kernel != std::vector<int64_t>(w.dims.begin() + 2, w.dims.end()))
    c.fail("kernel_shape disagrees with the weight");
  const std::vector<Window> win = as_2d(windows(c, spatial, kernel, false));
  const Window& wh = win[0];
  const Window& ww = win[1];
  const RefTensor* b = nullptr;
  if (c.has(2)) {
    b = &c.in(2);
    if (b->dims != std::vector<int64_t>{M})
      c.fail("bias shape " + dims_str(b->dims) + " is not [" + std::to_string(M) + "]");
  }
  std::vector<int64_t> out_dims{N, M};
  for (size_t i = 2; i < x.dims.size(); ++i) out_dims.push_back(win[win.size() - (x.dims.size() - i)].out);
  RefTensor y = make(out_dims);
  const int64_t H = wh.in, W = ww.in, OH = wh.out, OW = ww.out, Cg = C / group, Mg = M / group;
  const int64_t K = Cg * wh.kernel * ww.kernel, P = OH * OW;
  // Unfold the input patch of every output position (im2col, zeros where the
  // window reads padding), then y[oc][p] = b[oc] + sum_k w[oc][k] col[k][p] with
  // p innermost so the loops run over long contiguous rows.
  std::vector<double> col(static_cast<size_t>(K * P));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t g = 0; g < group; ++g) {
      for (int64_t ci = 0; ci < Cg; ++ci) {
        const double* in = &x.data[static_cast<size_t>((n * C + g * Cg + ci) * H * W)];
        for (int64_t kh = 0; kh < wh.kernel; ++kh)
          for (int64_t kw = 0; kw < ww.kernel; ++kw) {
            double* row = &col[static_cast<size_t>(((ci * wh.kernel + kh) * ww.kernel + kw) * P)];
            for (int64_t oh = 0; oh < OH; ++oh) {
              const int64_t ih = oh * wh.stride + kh * wh.dilation - wh.pad_begin;
              for (int64_t ow = 0; ow < OW; ++ow) {
                const int64_t iw = ow * ww.stride + kw * ww.dilation - ww.pad_begin;
                row[oh * OW + ow] = (ih >= 0 && ih < H && iw >= 0 && iw < W) ? in[ih * W + iw] : 0.0;
              }
            }
          }
      }
      for (int64_t m = 0; m < Mg; ++m) {
        const int64_t oc = g * Mg + m;
        double* out = &y.data[static_cast<size_t>((n * M + oc) * P)];
        std::fill(out, out + P, b ? b->data[static_cast<size_t>(oc)] : 0.0);
        const double* wrow = &w.data[static_cast<size_t>(oc * K)];
        for (int64_t k = 0; k < K; ++k) {
          const double wv = wrow[k];
          const double* crow = &col[static_cast<size_t>(k * P)];
          for (int64_t p = 0; p < P; ++p) out[p] += wv * crow[p];
        }
      }
    }
  return y;
}

RefTensor pool(NodeContext& c, bool is_max) {
  const RefTensor& x = c.in_rank(0, 3, 4);
  if (c.node().outputs.size() > 1 && !c.node().outputs[1].empty())
    c.fail("MaxPool Indices output is not supported");
  if (c.attr_int("storage_order", 0) != 0) c.fail("storage_order is not supported");
  const std::vector<int64_t> spatial(x.dims.begin() + 2, x.dims.end());
  const std::vector<int64_t> kernel = c.attr_ints("kernel_shape", {});
  if (kernel.empty()) c.fail("kernel_shape is required");
  if (!is_max && c.node().has_attr("dilations")) {
    for (int64_t d : c.attr_ints("dilations", {}))
      if (d != 1) c.fail("AveragePool dilations are not supported");
  }
  const std::vector<Window> win = as_2d(windows(c, spatial, kernel, c.attr_int("ceil_mode", 0) != 0));
  const bool include_pad = c.attr_int("count_include_pad", 0) != 0;
  const Window& wh = win[0];
  const Window& ww = win[1];
  std::vector<int64_t> out_dims{x.dims[0], x.dims[1]};
  for (size_t i = 2; i < x.dims.size(); ++i) out_dims.push_back(win[win.size() - (x.dims.size() - i)].out);
  RefTensor y = make(out_dims);
  const int64_t planes = x.dims[0] * x.dims[1], H = wh.in, W = ww.in, OH = wh.out, OW = ww.out;
  for (int64_t p = 0; p < planes; ++p) {
    const double* in = &x.data[static_cast<size_t>(p * H * W)];
    double* out = &y.data[static_cast<size_t>(p * OH * OW)];
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        double best = -std::numeric_limits<double>::infinity(), sum = 0.0;
        int64_t inside = 0, padded = 0;
        for (int64_t kh = 0; kh < wh.kernel; ++kh) {
          const int64_t ih = oh * wh.stride + kh * wh.dilation - wh.pad_begin;
          for (int64_t kw = 0; kw < ww.kernel; ++kw) {
            const int64_t iw = ow * ww.stride + kw * ww.dilation - ww.pad_begin;
            const bool in_padded = ih < H + wh.pad_end && iw < W + ww.pad_end;  // ih, iw >= -pad_begin always
            if (in_padded) ++padded;
            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
            const double v = in[ih * W + iw];
            best = std::max(best, v);
            sum += v;
            ++inside;
          }
        }
        if (is_max)
          out[oh * OW + ow] = best;
        else
          out[oh * OW + ow] = inside ? sum / static_cast<double>(include_pad ? padded : inside) : 0.0;
      }
  }
  return y;
}

RefTensor global_avgpool(NodeContext& c) {
  const RefTensor& x = c.in_rank(0, 3, 8);
  std::vector<int64_t> out_dims{x.dims[0], x.dims[1]};
  out_dims.resize(x.dims.size(), 1);
  RefTensor y = make(out_dims);
  const int64_t inner = count_of(std::vector<int64_t>(x.dims.begin() + 2, x.dims.end()));
  for (size_t p = 0; p < y.data.size(); ++p) {
    double s = 0.0;
    for (int64_t i = 0; i < inner; ++i) s += x.data[p * static_cast<size_t>(inner) + static_cast<size_t>(i)];
    y.data[p] = s / static_cast<double>(inner);
  }
  return y;
}

RefTensor global_maxpool(NodeContext& c) {
  const RefTensor& x = c.in_rank(0, 3, 8);
  std::vector<int64_t> out_dims{x.dims[0], x.dims[1]};
  out_dims.resize(x.dims.size(), 1);
  RefTensor y = make(out_dims);
  const int64_t inner = count_of(std::vector<int64_t>(x.dims.begin() + 2, x.dims.end()));
  for (size_t p = 0; p < y.data.size(); ++p) {
    double m = -std::numeric_limits<double>::infinity();
    for (int64_t i = 0; i < inner; ++i)
      m = std::max(m, x.data[p * static_cast<size_t>(inner) + static_cast<size_t>(i)]);
    y.data[p] = m;
  }
  return y;
}

// Maps every output element to the input element it reads along each axis
// (`source[axis](out_index)`, -1 for "outside": the constant), then gathers.
RefTensor gather_axes(const RefTensor& x, const std::vector<int64_t>& out_dims,
                      const std::vector<std::vector<int64_t>>& source, double outside) {
  RefTensor y = make(out_dims);
  const size_t rank = out_dims.size();
  std::vector<int64_t> idx(rank, 0);
  for (size_t o = 0; o < y.data.size(); ++o) {
    int64_t offset = 0;
    bool in = true;
    for (size_t a = 0; a < rank; ++a) {
      const int64_t s = source[a][static_cast<size_t>(idx[a])];
      in = in && s >= 0;
      offset = offset * x.dims[a] + std::max<int64_t>(s, 0);
    }
    y.data[o] = in ? x.data[static_cast<size_t>(offset)] : outside;
    for (size_t a = rank; a-- > 0;) {
      if (++idx[a] < out_dims[a]) break;
      idx[a] = 0;
    }
  }
  return y;
}

// Pad: constant (attribute `value` before opset 11, input 2 since), reflect, edge;
// negative pads crop.
RefTensor pad(NodeContext& c) {
  const RefTensor& x = c.in(0);
  const size_t rank = x.dims.size();
  std::vector<int64_t> pads;
  double value = 0.0;
  if (c.opset() < 11) {
    pads = c.attr_ints("pads", {});
    value = c.attr_float("value", 0.0);
  } else {
    for (double v : c.in_rank(1, 1, 1).data) pads.push_back(static_cast<int64_t>(v));
    if (c.has(2) && !c.in(2).data.empty()) value = c.in(2).data[0];
    if (c.has(3)) c.fail("the axes input is not supported");
  }
  if (pads.size() != 2 * rank)
    c.fail("pads has " + std::to_string(pads.size()) + " values for rank " + std::to_string(rank));
  const std::string mode = c.attr_string("mode", "constant");
  if (mode != "constant" && mode != "reflect" && mode != "edge")
    c.fail("mode '" + mode + "' is not supported");
  std::vector<int64_t> out_dims(rank);
  std::vector<std::vector<int64_t>> source(rank);
  for (size_t a = 0; a < rank; ++a) {
    const int64_t n = x.dims[a], begin = pads[a];
    out_dims[a] = n + pads[a] + pads[a + rank];
    if (out_dims[a] < 0) c.fail("pads crop more than axis " + std::to_string(a) + " holds");
    for (int64_t o = 0; o < out_dims[a]; ++o) {
      int64_t i = o - begin;
      if (i < 0 || i >= n) {
        if (mode == "edge") i = std::clamp<int64_t>(i, 0, n - 1);
        if (mode == "reflect") {
          if (n < 2 || begin >= n || pads[a + rank] >= n)
            c.fail("reflect pads must be smaller than the axis");
          i = i < 0 ? -i : 2 * (n - 1) - i;
        }
        if (mode == "constant") i = -1;
      }
      source[a].push_back(i);
    }
  }
  return gather_axes(x, out_dims, source, value);
}

// Where output coordinate `o` of an axis resized from `in` to `out` (scale
// `scale`) lands in the input, per coordinate_transformation_mode.
double resize_coordinate(NodeContext& c, const std::string& mode, int64_t o, int64_t in, int64_t out,
                         double scale) {
  const double x = static_cast<double>(o);
  if (mode == "half_pixel") return (x + 0.5) / scale - 0.5;
  if (mode == "pytorch_half_pixel") return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
  if (mode == "align_corners")
    return out == 1 ? 0.0 : x * static_cast<double>(in - 1) / static_cast<double>(out - 1);
  if (mode == "asymmetric") return x / scale;
  if (mode == "tf_half_pixel_for_nn") return (x + 0.5) / scale;
  c.fail("coordinate_transformation_mode '" + mode + "' is not supported");
}

int64_t nearest_index(NodeContext& c, const std::string& mode, double v) {
  const double f = std::floor(v);
  const bool half = v - f == 0.5;
  if (mode == "round_prefer_floor") return static_cast<int64_t>(half ? f : std::round(v));
  if (mode == "round_prefer_ceil") return static_cast<int64_t>(half ? f + 1 : std::round(v));
  if (mode == "floor") return static_cast<int64_t>(f);
  if (mode == "ceil") return static_cast<int64_t>(std::ceil(v));
  c.fail("nearest_mode '" + mode + "' is not supported");
}

// Resize (opsets 10-17) and Upsample, mode nearest only: every output pixel
// copies one input pixel.
RefTensor resize_nearest(NodeContext& c) {
  const RefTensor& x = c.in(0);
  const size_t rank = x.dims.size();
  const bool upsample = c.node().op_type == "Upsample";
  const bool old_form = upsample || c.opset() < 11;  // asymmetric coordinates, floor
  if (c.attr_string("mode", "nearest") != "nearest") c.fail("only mode 'nearest' is supported");
  if (c.node().has_attr("axes")) c.fail("the axes attribute is not supported");
  std::vector<double> scales;
  std::vector<int64_t> sizes;
  if (upsample && c.node().has_attr("scales")) {
    for (float v : c.node().attr("scales")->floats) scales.push_back(v);
  } else if (old_form) {
    scales = c.in(1).data;
  } else {
    if (c.has(2)) scales = c.in(2).data;
    if (c.has(3))
      for (double v : c.in(3).data) sizes.push_back(static_cast<int64_t>(v));
  }
  if (scales.size() != rank && sizes.size() != rank)
    c.fail("needs " + std::to_string(rank) + " scales or sizes");
  const std::string coords =
      old_form ? "asymmetric" : c.attr_string("coordinate_transformation_mode", "half_pixel");
  const std::string rounding = old_form ? "floor" : c.attr_string("nearest_mode", "round_prefer_floor");
  std::vector<int64_t> out_dims(rank);
  std::vector<std::vector<int64_t>> source(rank);
  for (size_t a = 0; a < rank; ++a) {
    const int64_t in = x.dims[a];
    double scale = sizes.empty() ? scales[a] : 0.0;
    out_dims[a] =
        sizes.empty() ? static_cast<int64_t>(std::floor(static_cast<double>(in) * scale)) : sizes[a];
    if (!sizes.empty()) scale = static_cast<double>(out_dims[a]) / static_cast<double>(in);
    if (!(scale > 0.0) || out_dims[a] < 1) c.fail("scale of axis " + std::to_string(a) + " is not positive");
    for (int64_t o = 0; o < out_dims[a]; ++o) {
      const int64_t i = nearest_index(c, rounding, resize_coordinate(c, coords, o, in, out_dims[a], scale));
      source[a].push_back(std::clamp<int64_t>(i, 0, in - 1));
    }
  }
  return gather_axes(x, out_dims, source, 0.0);
}

RefTensor batchnorm(NodeContext& c) {
  if (c.attr_int("training_mode", 0) != 0) c.fail("training_mode=1 is not supported (inference only)");
  if (c.node().outputs.size() > 1) c.fail("running statistics outputs (training mode) are not supported");
  const RefTensor& x = c.in_rank(0, 2, 8);
  const int64_t C = x.dims[1];
  const RefTensor* p[4];
  for (size_t i = 0; i < 4; ++i) {
    p[i] = &c.in(i + 1);
    if (p[i]->dims != std::vector<int64_t>{C})
      c.fail("parameter " + c.node().inputs[i + 1] + " is not [" + std::to_string(C) + "]");
  }
  const double eps = c.attr_float("epsilon", 1e-5);
  const int64_t inner = count_of(std::vector<int64_t>(x.dims.begin() + 2, x.dims.end()));
  RefTensor y = make(x.dims);
  for (size_t i = 0; i < x.data.size(); ++i) {
    const size_t ch = (i / static_cast<size_t>(inner)) % static_cast<size_t>(C);
    const double scale = p[0]->data[ch], bias = p[1]->data[ch], mean = p[2]->data[ch], var = p[3]->data[ch];
    y.data[i] = scale * (x.data[i] - mean) / std::sqrt(var + eps) + bias;
  }
  return y;
}

RefTensor unary(NodeContext& c, const std::function<double(double)>& f) {
  RefTensor y = c.in(0);
  for (double& v : y.data) v = f(v);
  return y;
}

RefTensor clip(NodeContext& c) {
  double lo = -std::numeric_limits<double>::infinity(), hi = std::numeric_limits<double>::infinity();
  if (c.opset() < 11) {
    lo = c.attr_float("min", lo);
    hi = c.attr_float("max", hi);
  } else {
    for (size_t i : {size_t{1}, size_t{2}}) {
      if (!c.has(i)) continue;
      const RefTensor& b = c.in(i);
      if (b.data.size() != 1) c.fail("bound '" + c.node().inputs[i] + "' is not a scalar");
      (i == 1 ? lo : hi) = b.data[0];
    }
  }
  return unary(c, [&](double v) { return std::min(std::max(v, lo), hi); });
}

// Numpy broadcasting of two shapes; Error naming the node when impossible.
std::vector<int64_t> broadcast_dims(NodeContext& c, const std::vector<int64_t>& a,
                                    const std::vector<int64_t>& b) {
  const size_t r = std::max(a.size(), b.size());
  std::vector<int64_t> out(r);
  for (size_t i = 0; i < r; ++i) {
    const int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1) c.fail("cannot broadcast " + dims_str(a) + " with " + dims_str(b));
    out[i] = da == 1 ? db : da;
  }
  return out;
}

// Flat index into a tensor of `dims` broadcast to `out`, for every flat index of `out`.
std::vector<size_t> broadcast_index(const std::vector<int64_t>& dims, const std::vector<int64_t>& out) {
  const size_t r = out.size(), off = r - dims.size();
  std::vector<int64_t> stride(r, 0);
  int64_t s = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    stride[i + off] = dims[i] == 1 ? 0 : s;
    s *= dims[i];
  }
  std::vector<size_t> idx(static_cast<size_t>(count_of(out)));
  std::vector<int64_t> pos(r, 0);
  int64_t flat = 0;
  for (size_t k = 0; k < idx.size(); ++k) {
    idx[k] = static_cast<size_t>(flat);
    for (size_t a = r; a-- > 0;) {  // odometer increment
      if (++pos[a] < out[a]) {
        flat += stride[a];
        break;
      }
      flat -= stride[a] * (pos[a] - 1);
      pos[a] = 0;
    }
  }
  return idx;
}

RefTensor binary(NodeContext& c, const std::function<double(double, double)>& f) {
  const RefTensor& a = c.in(0);
  const RefTensor& b = c.in(1);
  RefTensor y = make(broadcast_dims(c, a.dims, b.dims));
  const std::vector<size_t> ia = broadcast_index(a.dims, y.dims), ib = broadcast_index(b.dims, y.dims);
  for (size_t k = 0; k < y.data.size(); ++k) y.data[k] = f(a.data[ia[k]], b.data[ib[k]]);
  return y;
}

// Where(condition, X, Y): X where the condition is non-zero, else Y; all three broadcast.
RefTensor where(NodeContext& c) {
  const RefTensor &cond = c.in(0), &a = c.in(1), &b = c.in(2);
  RefTensor y = make(broadcast_dims(c, cond.dims, broadcast_dims(c, a.dims, b.dims)));
  const std::vector<size_t> ic = broadcast_index(cond.dims, y.dims), ia = broadcast_index(a.dims, y.dims),
                            ib = broadcast_index(b.dims, y.dims);
  for (size_t k = 0; k < y.data.size(); ++k)
    y.data[k] = cond.data[ic[k]] != 0.0 ? a.data[ia[k]] : b.data[ib[k]];
  return y;
}

// Cast to float, double, bool (non-zero -> 1) or an integer type (truncated).
RefTensor cast(NodeContext& c) {
  const DType to = static_cast<DType>(c.attr_int("to", 0));
  switch (to) {
    case DType::Float32:
      return unary(c, [](double v) { return static_cast<double>(static_cast<float>(v)); });
    case DType::Float64:
      return c.in(0);
    case DType::Bool:
      return unary(c, [](double v) { return v != 0.0 ? 1.0 : 0.0; });
    case DType::Int32:
    case DType::Int64:
      return unary(c, [](double v) { return std::trunc(v); });
    default:
      c.fail(std::string("cast to ") + dtype_name(to) + " is not supported");
  }
}

RefTensor concat(NodeContext& c) {
  if (c.node().inputs.empty()) c.fail("no inputs");
  if (!c.node().has_attr("axis")) c.fail("attribute 'axis' is required");
  const RefTensor& first = c.in(0);
  const size_t axis = c.axis(c.attr_int("axis", 0), first.dims.size());
  std::vector<int64_t> out_dims = first.dims;
  out_dims[axis] = 0;
  std::vector<const RefTensor*> parts;
  for (size_t i = 0; i < c.node().inputs.size(); ++i) {
    const RefTensor& t = c.in(i);
    if (t.dims.size() != first.dims.size()) c.fail("inputs differ in rank");
    for (size_t d = 0; d < t.dims.size(); ++d)
      if (d != axis && t.dims[d] != first.dims[d])
        c.fail("input " + dims_str(t.dims) + " does not match " + dims_str(first.dims) + " off the axis");
    out_dims[axis] += t.dims[axis];
    parts.push_back(&t);
  }
  RefTensor y = make(out_dims);
  const int64_t outer =
      count_of(std::vector<int64_t>(out_dims.begin(), out_dims.begin() + static_cast<long>(axis)));
  const int64_t inner =
      count_of(std::vector<int64_t>(out_dims.begin() + static_cast<long>(axis) + 1, out_dims.end()));
  size_t at = 0;
  for (int64_t o = 0; o < outer; ++o)
    for (const RefTensor* t : parts) {
      const size_t block = static_cast<size_t>(t->dims[axis] * inner);
      std::copy_n(t->data.begin() + static_cast<long>(static_cast<size_t>(o) * block), block,
                  y.data.begin() + static_cast<long>(at));
      at += block;
    }
  return y;
}

RefTensor lrn(NodeContext& c) {
  const RefTensor& x = c.in_rank(0, 3, 8);
  if (!c.node().has_attr("size")) c.fail("attribute 'size' is required");
  const int64_t size = c.attr_int("size", 1);
  const double alpha = c.attr_float("alpha", 1e-4), beta = c.attr_float("beta", 0.75),
               bias = c.attr_float("bias", 1.0);
  const int64_t N = x.dims[0], C = x.dims[1];
  const int64_t inner = count_of(std::vector<int64_t>(x.dims.begin() + 2, x.dims.end()));
  // square_sum[c] sums x^2 over channels c - floor((size-1)/2) .. c + ceil((size-1)/2).
  const int64_t before = (size - 1) / 2, after = size - 1 - before;
  RefTensor y = make(x.dims);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t ch = 0; ch < C; ++ch)
      for (int64_t i = 0; i < inner; ++i) {
        double sq = 0.0;
        for (int64_t k = std::max<int64_t>(0, ch - before); k <= std::min(C - 1, ch + after); ++k) {
          const double v = x.data[static_cast<size_t>((n * C + k) * inner + i)];
          sq += v * v;
        }
        const size_t at = static_cast<size_t>((n * C + ch) * inner + i);
        y.data[at] = x.data[at] / std::pow(bias + alpha / static_cast<double>(size) * sq, beta);
      }
  return y;
}

RefTensor gemm(NodeContext& c) {
  const RefTensor& a = c.in_rank(0, 2, 2);
  const RefTensor& b = c.in_rank(1, 2, 2);
  const bool ta = c.attr_int("transA", 0) != 0, tb = c.attr_int("transB", 0) != 0;
  const double alpha = c.attr_float("alpha", 1.0), beta = c.attr_float("beta", 1.0);
  const int64_t M = ta ? a.dims[1] : a.dims[0], K = ta ? a.dims[0] : a.dims[1];
  const int64_t Kb = tb ? b.dims[1] : b.dims[0], Nn = tb ? b.dims[0] : b.dims[1];
  if (K != Kb)
    c.fail("A " + dims_str(a.dims) + " and B " + dims_str(b.dims) + " do not multiply with these transposes");
  RefTensor y = make({M, Nn});
  if (c.has(2)) {
    const RefTensor& cc = c.in(2);
    // C broadcasts one way only: to [M, N].
    if (broadcast_dims(c, cc.dims, y.dims) != y.dims)
      c.fail("C " + dims_str(cc.dims) + " does not broadcast to [M, N]");
    const std::vector<size_t> ic = broadcast_index(cc.dims, y.dims);
    for (size_t k = 0; k < y.data.size(); ++k) y.data[k] = beta * cc.data[ic[k]];
  }
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < Nn; ++j) {
      double s = 0.0;
      for (int64_t k = 0; k < K; ++k) {
        const double av =
            ta ? a.data[static_cast<size_t>(k * M + i)] : a.data[static_cast<size_t>(i * K + k)];
        const double bv =
            tb ? b.data[static_cast<size_t>(j * K + k)] : b.data[static_cast<size_t>(k * Nn + j)];
        s += av * bv;
      }
      y.data[static_cast<size_t>(i * Nn + j)] += alpha * s;
    }
  return y;
}

RefTensor matmul(NodeContext& c) {
  RefTensor a = c.in_rank(0, 1, 8), b = c.in_rank(1, 1, 8);
  const bool a_vec = a.dims.size() == 1, b_vec = b.dims.size() == 1;
  if (a_vec) a.dims.insert(a.dims.begin(), 1);
  if (b_vec) b.dims.push_back(1);
  const int64_t M = a.dims[a.dims.size() - 2], K = a.dims.back(), Kb = b.dims[b.dims.size() - 2],
                Nn = b.dims.back();
  if (K != Kb) c.fail("inner dimensions differ: " + dims_str(a.dims) + " x " + dims_str(b.dims));
  const std::vector<int64_t> ba(a.dims.begin(), a.dims.end() - 2), bb(b.dims.begin(), b.dims.end() - 2);
  std::vector<int64_t> batch = broadcast_dims(c, ba, bb);
  const std::vector<size_t> ia = broadcast_index(ba, batch), ib = broadcast_index(bb, batch);
  std::vector<int64_t> out_dims = batch;
  out_dims.push_back(M);
  out_dims.push_back(Nn);
  RefTensor y = make(out_dims);
  for (size_t p = 0; p < ia.size(); ++p) {
    const double* A = &a.data[ia[p] * static_cast<size_t>(M * K)];
    const double* B = &b.data[ib[p] * static_cast<size_t>(K * Nn)];
    double* Y = &y.data[p * static_cast<size_t>(M * Nn)];
    for (int64_t i = 0; i < M; ++i)
      for (int64_t j = 0; j < Nn; ++j) {
        double s = 0.0;
        for (int64_t k = 0; k < K; ++k) s += A[i * K + k] * B[k * Nn + j];
        Y[i * Nn + j] = s;
      }
  }
  if (a_vec) y.dims.erase(y.dims.end() - 2);
  if (b_vec) y.dims.pop_back();
  return y;
}

RefTensor flatten(NodeContext& c) {
  RefTensor y = c.in(0);
  const size_t axis = c.axis(c.attr_int("axis", 1), y.dims.size(), true);
  const int64_t outer =
      count_of(std::vector<int64_t>(y.dims.begin(), y.dims.begin() + static_cast<long>(axis)));
  y.dims = {outer, count_of(y.dims) / std::max<int64_t>(outer, 1)};
  if (outer == 0)
    y.dims[1] =
        count_of(std::vector<int64_t>(c.in(0).dims.begin() + static_cast<long>(axis), c.in(0).dims.end()));
  return y;
}

RefTensor reshape(NodeContext& c) {
  RefTensor y = c.in(0);
  const RefTensor& s = c.in_rank(1, 1, 1);
  const bool allow_zero = c.attr_int("allowzero", 0) != 0;
  std::vector<int64_t> dims(s.data.size());
  int64_t known = 1;
  int infer = -1;
  for (size_t i = 0; i < dims.size(); ++i) {
    const int64_t v = static_cast<int64_t>(s.data[i]);
    if (v == -1) {
      if (infer >= 0) c.fail("more than one -1 in the target shape");
      infer = static_cast<int>(i);
      continue;
    }
    if (v == 0 && !allow_zero) {
      if (i >= y.dims.size()) c.fail("0 at position " + std::to_string(i) + " copies a dim the input lacks");
      dims[i] = y.dims[i];
    } else if (v < 0) {
      c.fail("invalid target dim " + std::to_string(v));
    } else {
      dims[i] = v;
    }
    known *= dims[i];
  }
  const int64_t total = count_of(y.dims);
  if (infer >= 0) {
    if (known == 0 || total % known) c.fail("cannot infer -1 reshaping " + dims_str(y.dims));
    dims[static_cast<size_t>(infer)] = total / known;
  }
  if (count_of(dims) != total) c.fail("cannot reshape " + dims_str(y.dims) + " to " + dims_str(dims));
  y.dims = dims;
  return y;
}

RefTensor softmax(NodeContext& c) {
  RefTensor y = c.in(0);
  const size_t rank = y.dims.size();
  // Product of dims[a, b): no temporary vectors (GCC 12 -O3 warns falsely on them).
  auto prod = [&](size_t a, size_t b) {
    int64_t n = 1;
    for (size_t k = a; k < b; ++k) n *= y.dims[k];
    return n;
  };
  size_t axis;
  int64_t outer, len, inner;
  if (c.opset() >= 13) {  // one axis
    axis = c.axis(c.attr_int("axis", -1), rank);
    outer = prod(0, axis);
    len = y.dims[axis];
    inner = prod(axis + 1, rank);
  } else {  // coerced to 2-D at axis
    axis = c.axis(c.attr_int("axis", 1), rank, true);
    outer = prod(0, axis);
    len = prod(axis, rank);
    inner = 1;
  }
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t k) -> double& { return y.data[static_cast<size_t>((o * len + k) * inner + i)]; };
      double mx = -std::numeric_limits<double>::infinity(), sum = 0.0;
      for (int64_t k = 0; k < len; ++k) mx = std::max(mx, at(k));
      for (int64_t k = 0; k < len; ++k) sum += (at(k) = std::exp(at(k) - mx));
      for (int64_t k = 0; k < len; ++k) at(k) /= sum;
    }
  return y;
}

std::vector<RefTensor> dropout(NodeContext& c) {
  if (c.has(2)) {
    const RefTensor& t = c.in(2);
    if (!t.data.empty() && t.data[0] != 0.0) c.fail("training_mode=true is not supported (inference only)");
  }
  std::vector<RefTensor> out{c.in(0)};
  if (c.node().outputs.size() > 1) out.push_back(make(c.in(0).dims, 1.0));  // mask: everything kept
  return out;
}

std::vector<RefTensor> evaluate(NodeContext& c) {
  const std::string& op = c.node().op_type;
  if (!c.node().domain.empty() && c.node().domain != "ai.onnx")
    c.fail("domain '" + c.node().domain + "' is not supported");
  if (op == "Conv") return {conv(c)};
  if (op == "MaxPool") return {pool(c, true)};
  if (op == "AveragePool") return {pool(c, false)};
  if (op == "GlobalAveragePool") return {global_avgpool(c)};
  if (op == "GlobalMaxPool") return {global_maxpool(c)};
  if (op == "Pad") return {pad(c)};
  if (op == "Resize" || op == "Upsample") return {resize_nearest(c)};
  if (op == "BatchNormalization") return {batchnorm(c)};
  if (op == "Relu") return {unary(c, [](double v) { return v > 0.0 ? v : 0.0; })};
  if (op == "Sigmoid") return {unary(c, [](double v) { return 1.0 / (1.0 + std::exp(-v)); })};
  if (op == "HardSigmoid") {
    const double alpha = c.attr_float("alpha", 0.2), beta = c.attr_float("beta", 0.5);
    return {unary(c, [&](double v) { return std::min(1.0, std::max(0.0, alpha * v + beta)); })};
  }
  if (op == "HardSwish")
    return {unary(c, [](double v) { return v * std::min(1.0, std::max(0.0, v / 6.0 + 0.5)); })};
  if (op == "LeakyRelu") {
    const double alpha = c.attr_float("alpha", 0.01);
    return {unary(c, [&](double v) { return v >= 0.0 ? v : alpha * v; })};
  }
  if (op == "Identity") return {c.in(0)};
  if (op == "Clip") return {clip(c)};
  if (op == "Add") return {binary(c, [](double a, double b) { return a + b; })};
  if (op == "Mul") return {binary(c, [](double a, double b) { return a * b; })};
  if (op == "Sub") return {binary(c, [](double a, double b) { return a - b; })};
  if (op == "Div") return {binary(c, [](double a, double b) { return a / b; })};
  if (op == "Greater") return {binary(c, [](double a, double b) { return a > b ? 1.0 : 0.0; })};
  if (op == "GreaterOrEqual") return {binary(c, [](double a, double b) { return a >= b ? 1.0 : 0.0; })};
  if (op == "Where") return {where(c)};
  if (op == "Cast") return {cast(c)};
  if (op == "Concat") return {concat(c)};
  if (op == "LRN") return {lrn(c)};
  if (op == "Gemm") return {gemm(c)};
  if (op == "MatMul") return {matmul(c)};
  if (op == "Flatten") return {flatten(c)};
  if (op == "Reshape") return {reshape(c)};
  if (op == "Softmax") return {softmax(c)};
  if (op == "Dropout") return dropout(c);
  if (op == "Constant") {
    const Attribute* v = c.node().attr("value");
    if (!v || v->kind != Attribute::Kind::Tensor || !v->t)
      c.fail("only the 'value' tensor form is supported");
    return {to_ref(*v->t)};
  }
  c.fail("op is not supported by the reference evaluator");
}

int default_opset(const Graph& g) {
  for (const OpsetImport& o : g.opsets)
    if (o.domain.empty() || o.domain == "ai.onnx") return static_cast<int>(o.version);
  return 13;
}

RefValues run(const Graph& g, const RefValues& inputs, bool keep_all) {
  RefValues values;
  for (const std::string& name : g.inputs) {
    if (g.is_initializer(name)) continue;
    auto it = inputs.find(name);
    if (it == inputs.end()) throw Error("reference: graph input '" + name + "' was not given");
    if (static_cast<int64_t>(it->second.data.size()) != count_of(it->second.dims))
      throw Error("reference: input '" + name + "' has " + std::to_string(it->second.data.size()) +
                  " values for dims " + dims_str(it->second.dims));
    values[name] = it->second;
  }
  for (const auto& kv : inputs)
    if (!values.count(kv.first)) throw Error("reference: '" + kv.first + "' is not an input of the graph");
  // Last reader of each value, so that intermediates can be freed early.
  std::map<std::string, size_t> last_use;
  for (size_t i = 0; i < g.nodes.size(); ++i)
    for (const std::string& in : g.nodes[i].inputs) last_use[in] = i;
  const std::set<std::string> outputs(g.outputs.begin(), g.outputs.end());
  const int opset = default_opset(g);
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& node = g.nodes[i];
    std::vector<RefTensor> results;
    {
      NodeContext ctx(node, g, values, opset);
      results = evaluate(ctx);
    }
    for (size_t k = 0; k < node.outputs.size() && k < results.size(); ++k)
      if (!node.outputs[k].empty()) values[node.outputs[k]] = std::move(results[k]);
    if (!keep_all)
      for (const std::string& in : node.inputs)
        if (!in.empty() && last_use[in] == i && !outputs.count(in)) values.erase(in);
  }
  if (keep_all) return values;
  RefValues out;
  for (const std::string& name : g.outputs) {
    auto it = values.find(name);
    if (it == values.end()) throw Error("reference: graph output '" + name + "' was never computed");
    out[name] = it->second;
  }
  return out;
}

}  // namespace

RefValues reference_run(const Graph& g, const RefValues& inputs) { return run(g, inputs, false); }

RefValues reference_run_all(const Graph& g, const RefValues& inputs) { return run(g, inputs, true); }

RefTensor to_ref(const Tensor& t) {
  RefTensor r;
  r.dims = t.dims;
  r.data.assign(t.data.begin(), t.data.end());
  return r;
}

RefTensor to_ref(const TensorDesc& d) {
  RefTensor r;
  if (!d.has_shape || !shape_is_known(d.shape))
    throw Error("reference: tensor '" + d.name + "' has no known shape");
  r.dims = known_dims(d.shape);
  const size_t n = static_cast<size_t>(count_of(r.dims));
  const size_t width = dtype_size(d.dtype);
  if (width == 0 || d.data.size() != n * width)
    throw Error("reference: tensor '" + d.name + "' (" + dtype_name(d.dtype) + ") holds " +
                std::to_string(d.data.size()) + " bytes for dims " + dims_str(r.dims));
  r.data.resize(n);
  auto convert = [&](auto sample) {
    using T = decltype(sample);
    for (size_t i = 0; i < n; ++i) {
      T v;
      std::memcpy(&v, d.data.data() + i * sizeof(T), sizeof(T));
      r.data[i] = static_cast<double>(v);
    }
  };
  switch (d.dtype) {
    case DType::Float32:
      convert(float{});
      break;
    case DType::Float64:
      convert(double{});
      break;
    case DType::Int64:
      convert(int64_t{});
      break;
    case DType::Int32:
      convert(int32_t{});
      break;
    case DType::Int8:
      convert(int8_t{});
      break;
    case DType::UInt8:
    case DType::Bool:
      convert(uint8_t{});
      break;
    default:
      throw Error("reference: tensor '" + d.name + "' has unsupported dtype " + dtype_name(d.dtype));
  }
  return r;
}

Tensor to_float_tensor(const RefTensor& t) {
  Tensor out;
  out.dims = t.dims;
  out.data.assign(t.data.begin(), t.data.end());
  return out;
}

RefTensor random_ref_tensor(const std::vector<int64_t>& dims, uint64_t seed) {
  RefTensor t = make(dims);
  uint64_t state = seed * 0xD1B54A32D192ED03ull + 0x8BB84B93962EACC9ull;
  for (double& v : t.data) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    v = 2.0 * static_cast<double>(z >> 11) * 0x1.0p-53 - 1.0;
  }
  return t;
}

double max_abs_diff(const RefTensor& a, const RefTensor& b) {
  if (a.dims != b.dims) throw Error("reference: comparing " + dims_str(a.dims) + " with " + dims_str(b.dims));
  double m = 0.0;
  for (size_t i = 0; i < a.data.size(); ++i) m = std::max(m, std::fabs(a.data[i] - b.data[i]));
  return m;
}

double max_rel_diff(const RefTensor& a, const RefTensor& b, double floor) {
  if (a.dims != b.dims) throw Error("reference: comparing " + dims_str(a.dims) + " with " + dims_str(b.dims));
  double m = 0.0;
  for (size_t i = 0; i < a.data.size(); ++i)
    m = std::max(m, std::fabs(a.data[i] - b.data[i]) / (std::fabs(b.data[i]) + floor));
  return m;
}

}  // namespace frugal
