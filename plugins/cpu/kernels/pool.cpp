// MaxPool, AveragePool (1-D and 2-D; pads, auto_pad, strides, dilations,
// ceil_mode, count_include_pad both ways), GlobalAveragePool and GlobalMaxPool
// (any spatial rank). Direct loops, parallel over (sample, channel) planes.
#include <algorithm>
#include <cmath>
#include <limits>

#include "kernels/kernel_util.h"
#include "common/window.h"

namespace frugal::cpu {

using exec::Window;

namespace {

class PoolKernel : public Kernel {
 public:
  explicit PoolKernel(const KernelSpec& s) : label_(s.label()) {
    const Node& n = *s.node;
    max_ = n.op_type == "MaxPool";
    require_float_activation(s, 0, "input X");
    if (!n.has_attr("kernel_shape")) fail(s, "attribute kernel_shape is required");
    const Dims kernel = n.attr_ints("kernel_shape", {});
    const Dims& x = s.inputs[0].dims;
    if (kernel.size() == 3 || x.size() == 5) unsupported(s, "3-D pooling is not supported (1-D and 2-D are)");
    if (!max_ && n.has_attr("dilations")) {
      for (int64_t d : n.attr_ints("dilations", {}))
        if (d != 1) unsupported(s, "AveragePool with dilations is not supported");
    }
    win_ = Window::from_node(s, x, kernel, true);
    C_ = x[1];
    count_include_pad_ = n.attr_int("count_include_pad", 0) != 0;
  }

  Dims infer(const std::vector<Dims>& in) const override {
    const Dims& x = in[0];
    const bool two = win_.spatial_rank == 2;
    if (x.size() != size_t(win_.spatial_rank) + 2 || x[1] != C_ || (two && (x[2] != win_.H || x[3] != win_.W)) ||
        (!two && x[2] != win_.W))
      throw Error(label_ + ": input " + dims_string(x) + " does not match the compiled shape");
    return two ? Dims{x[0], C_, win_.Ho, win_.Wo} : Dims{x[0], C_, win_.Wo};
  }

  void run(const KernelArgs& a) const override {
    const int64_t planes = a.in_dims[0][0] * C_, in_plane = win_.H * win_.W, out_plane = win_.Ho * win_.Wo;
    parallel_range(a.pool, planes, 1, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) pool_plane(a.in[0] + p * in_plane, a.out + p * out_plane);
    });
  }

 private:
  // One (sample, channel) plane.
  void pool_plane(const float* x, float* y) const {
    const Window& w = win_;
    for (int64_t oh = 0; oh < w.Ho; ++oh) {
      for (int64_t ow = 0; ow < w.Wo; ++ow) {
        const int64_t h0 = oh * w.sh - w.pt, w0 = ow * w.sw - w.pl;
        float best = -std::numeric_limits<float>::infinity();
        double sum = 0.0;
        int64_t inside = 0, in_padded = 0;
        for (int64_t i = 0; i < w.kh; ++i) {
          const int64_t ih = h0 + i * w.dh;
          const bool row_in = ih >= 0 && ih < w.H;
          const bool row_padded = ih < w.H + w.pb;  // ih >= -pt always holds
          for (int64_t j = 0; j < w.kw; ++j) {
            const int64_t iw = w0 + j * w.dw;
            if (row_padded && iw < w.W + w.pr) ++in_padded;
            if (!row_in || iw < 0 || iw >= w.W) continue;
            const float v = x[ih * w.W + iw];
            ++inside;
            if (max_) best = std::max(best, v);
            else sum += v;
          }
        }
        if (max_) y[oh * w.Wo + ow] = best;
        else {
          const int64_t div = count_include_pad_ ? in_padded : inside;
          y[oh * w.Wo + ow] = div > 0 ? float(sum / double(div)) : 0.0f;
        }
      }
    }
  }

  std::string label_;
  Window win_;
  int64_t C_ = 0;
  bool max_ = false, count_include_pad_ = false;
};

class GlobalPoolKernel : public Kernel {
 public:
  explicit GlobalPoolKernel(const KernelSpec& s) : label_(s.label()) {
    max_ = s.node->op_type == "GlobalMaxPool";
    require_float_activation(s, 0, "input X");
    if (s.inputs[0].dims.size() < 3) fail(s, "input must have rank >= 3, got " + dims_string(s.inputs[0].dims));
  }

  Dims infer(const std::vector<Dims>& in) const override {
    if (in[0].size() < 3) throw Error(label_ + ": input must have rank >= 3, got " + dims_string(in[0]));
    Dims out = in[0];
    for (size_t i = 2; i < out.size(); ++i) out[i] = 1;
    return out;
  }

  void run(const KernelArgs& a) const override {
    const Dims& x = a.in_dims[0];
    const int64_t planes = x[0] * x[1], inner = product(x, 2);
    parallel_range(a.pool, planes, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, inner)), [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const float* v = a.in[0] + p * inner;
        if (max_) {
          float best = -std::numeric_limits<float>::infinity();
          for (int64_t i = 0; i < inner; ++i) best = std::max(best, v[i]);
          a.out[p] = best;
        } else {
          double sum = 0.0;
          for (int64_t i = 0; i < inner; ++i) sum += v[i];
          a.out[p] = float(sum / double(inner));
        }
      }
    });
  }

 private:
  std::string label_;
  bool max_ = false;
};

}  // namespace

std::unique_ptr<Kernel> make_pool(const KernelSpec& s) {
  if (s.node->op_type == "GlobalAveragePool" || s.node->op_type == "GlobalMaxPool")
    return std::make_unique<GlobalPoolKernel>(s);
  return std::make_unique<PoolKernel>(s);
}

}  // namespace frugal::cpu
