// MaxPool, AveragePool (1-D and 2-D; pads, auto_pad, strides, dilations,
// ceil_mode, count_include_pad both ways), GlobalAveragePool and GlobalMaxPool
// (any spatial rank). Parallel over (sample, channel) planes. Within a plane,
// the windows that lie wholly inside the input (the interior rectangle of
// outputs, fixed at compile time) run a loop over output columns without bounds
// checks that the compiler vectorises; only the border outputs take the generic
// loop that checks every window element against the input and the padding.
#include "frugal/model/ops/pool.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/window.h"
#include "kernels/kernel_util.h"
#include "kernels/vector_math.h"

namespace frugal::cpu {

using exec::Window;

namespace {

// Outputs [lo, hi) along one axis whose whole window lies inside [0, size):
// o*stride - pad >= 0 and o*stride - pad + (k-1)*dilation < size. The set is an
// interval (both bounds are monotone in o); empty when lo == hi.
void interior_range(int64_t outputs, int64_t size, int64_t k, int64_t stride, int64_t dilation, int64_t pad,
                    int64_t& lo, int64_t& hi) {
  auto inside = [&](int64_t o) {
    return o * stride - pad >= 0 && o * stride - pad + (k - 1) * dilation < size;
  };
  lo = 0;
  while (lo < outputs && !inside(lo)) ++lo;
  hi = lo;
  while (hi < outputs && inside(hi)) ++hi;
}

// y[k] = max(y[k], s[k * S]) and y[k] += s[k * S] for k < n: with restrict
// parameters so that the compiler vectorises them once inlined (stride 2 by
// shuffles); `acc < v ? v : acc` is std::max's order, so a NaN input is skipped.
template <int S>
__attribute__((always_inline)) inline void max_into(float* __restrict y, const float* __restrict s,
                                                    int64_t n) {
  for (int64_t k = 0; k < n; ++k) {
    const float v = s[k * S];
    y[k] = y[k] < v ? v : y[k];
  }
}
template <int S>
__attribute__((always_inline)) inline void add_into(float* __restrict y, const float* __restrict s,
                                                    int64_t n) {
  for (int64_t k = 0; k < n; ++k) y[k] += s[k * S];
}
// Three adjacent taps of one row at stride 2 (3x3/2 pools: ResNet, SqueezeNet) in one pass.
__attribute__((always_inline)) inline void max3_into_s2(float* __restrict y, const float* __restrict s,
                                                        int64_t n) {
  for (int64_t k = 0; k < n; ++k) {
    float a = y[k], v = s[2 * k];
    a = a < v ? v : a;
    v = s[2 * k + 1];
    a = a < v ? v : a;
    v = s[2 * k + 2];
    y[k] = a < v ? v : a;
  }
}

// One output row's interior columns y[0, n) (output column ow0 onwards), every
// window inside x: the max (or the mean over kh*kw values) of the window
// starting at input row h0. Max skips NaN inputs exactly as the generic loop
// does. S: the column stride when 1 or 2, else 0 (read from w). Compiled for
// AVX2 too (chosen at run time), since the compiler's default is SSE2 only.
template <bool Max, int S>
__attribute__((target_clones("avx2", "default"))) void pool_interior_row(const float* x, float* y, int64_t n,
                                                                         const exec::Window& w, int64_t h0,
                                                                         int64_t ow0) {
  const int64_t sw = S > 0 ? S : w.sw;
  const float init = Max ? -std::numeric_limits<float>::infinity() : 0.0f;
  for (int64_t k = 0; k < n; ++k) y[k] = init;
  for (int64_t i = 0; i < w.kh; ++i) {
    const float* row = x + (h0 + i * w.dh) * w.W + ow0 * sw - w.pl;
    if (Max && S == 2 && w.kw == 3 && w.dw == 1) {
      max3_into_s2(y, row, n);
      continue;
    }
    for (int64_t j = 0; j < w.kw; ++j) {
      const float* src = row + j * w.dw;
      if (S == 1)
        Max ? max_into<1>(y, src, n) : add_into<1>(y, src, n);
      else if (S == 2)
        Max ? max_into<2>(y, src, n) : add_into<2>(y, src, n);
      else if (Max)
        for (int64_t k = 0; k < n; ++k) y[k] = y[k] < src[k * sw] ? src[k * sw] : y[k];
      else
        for (int64_t k = 0; k < n; ++k) y[k] += src[k * sw];
    }
  }
  if (!Max) {
    const float div = float(w.kh * w.kw);  // every element is inside: both count_include_pad modes agree
    for (int64_t k = 0; k < n; ++k) y[k] /= div;
  }
}

using InteriorRow = void (*)(const float*, float*, int64_t, const exec::Window&, int64_t, int64_t);

template <bool Max>
InteriorRow pick_interior_row(int64_t sw) {
  return sw == 1   ? pool_interior_row<Max, 1>
         : sw == 2 ? pool_interior_row<Max, 2>
                   : pool_interior_row<Max, 0>;
}

class PoolKernel : public Kernel {
 public:
  explicit PoolKernel(const KernelSpec& s) : label_(s.label()) {
    const auto& op = s.op_as<ops::WindowPool>();
    const auto* avg = dynamic_cast<const ops::AveragePool*>(&op);
    max_ = avg == nullptr;
    require_float_activation(s, 0, "input X");
    const Dims& x = s.inputs[0].dims;
    if (op.kernel().size() == 3 || x.size() == 5)
      unsupported(s, "3-D pooling is not supported (1-D and 2-D are)");
    if (avg) {
      for (int64_t d : op.window.dilations)
        if (d != 1) unsupported(s, "AveragePool with dilations is not supported");
    }
    win_ = Window::from_node(s, x, op.kernel());
    C_ = x[1];
    count_include_pad_ = avg && avg->count_include_pad;
    interior_range(win_.Ho, win_.H, win_.kh, win_.sh, win_.dh, win_.pt, oh_lo_, oh_hi_);
    interior_range(win_.Wo, win_.W, win_.kw, win_.sw, win_.dw, win_.pl, ow_lo_, ow_hi_);
    interior_row_ = max_ ? pick_interior_row<true>(win_.sw) : pick_interior_row<false>(win_.sw);
  }

  void run(const KernelArgs& a) const override {
    const int64_t planes = a.in_dims[0][0] * C_, in_plane = win_.H * win_.W, out_plane = win_.Ho * win_.Wo;
    parallel_range(a.pool, planes, 1, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) pool_plane(a.in[0] + p * in_plane, a.out + p * out_plane);
    });
  }

 private:
  // One (sample, channel) plane: interior rows run the fast row loop between
  // their border columns; rows outside [oh_lo_, oh_hi_) are all border.
  void pool_plane(const float* x, float* y) const {
    const Window& w = win_;
    for (int64_t oh = 0; oh < w.Ho; ++oh) {
      float* yrow = y + oh * w.Wo;
      const bool interior = oh >= oh_lo_ && oh < oh_hi_ && ow_lo_ < ow_hi_;
      const int64_t a = interior ? ow_lo_ : w.Wo, b = interior ? ow_hi_ : w.Wo;
      for (int64_t ow = 0; ow < a; ++ow) yrow[ow] = pool_checked(x, oh, ow);
      if (interior) interior_row_(x, yrow + a, b - a, w, oh * w.sh - w.pt, a);
      for (int64_t ow = b; ow < w.Wo; ++ow) yrow[ow] = pool_checked(x, oh, ow);
    }
  }

  // One output whose window may cross the input's edge: checks every element
  // against the input and, for count_include_pad, against the padded input.
  float pool_checked(const float* x, int64_t oh, int64_t ow) const {
    const Window& w = win_;
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
        if (max_)
          best = std::max(best, v);
        else
          sum += v;
      }
    }
    if (max_) return best;
    const int64_t div = count_include_pad_ ? in_padded : inside;
    return div > 0 ? float(sum / double(div)) : 0.0f;
  }

  std::string label_;
  Window win_;
  int64_t C_ = 0;
  bool max_ = false, count_include_pad_ = false;
  int64_t oh_lo_ = 0, oh_hi_ = 0, ow_lo_ = 0, ow_hi_ = 0;  // outputs whose windows lie inside the input
  InteriorRow interior_row_ = nullptr;
};

class GlobalPoolKernel : public Kernel {
 public:
  explicit GlobalPoolKernel(const KernelSpec& s) : label_(s.label()) {
    max_ = dynamic_cast<const ops::GlobalMaxPool*>(s.op) != nullptr;
    require_float_activation(s, 0, "input X");
    if (s.inputs[0].dims.size() < 3)
      fail(s, "input must have rank >= 3, got " + dims_string(s.inputs[0].dims));
  }

  void run(const KernelArgs& a) const override {
    const Dims& x = a.in_dims[0];
    const int64_t planes = x[0] * x[1], inner = product(x, 2);
    parallel_range(a.pool, planes, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, inner)),
                   [&](int64_t p0, int64_t p1) {
                     for (int64_t p = p0; p < p1; ++p) {
                       const float* v = a.in[0] + p * inner;
                       if (max_) {
                         float best = -std::numeric_limits<float>::infinity();
                         for (int64_t i = 0; i < inner; ++i) best = std::max(best, v[i]);
                         a.out[p] = best;
                       } else {
                         a.out[p] = float(sum_floats(v, inner) / double(inner));
                       }
                     }
                   });
  }

 private:
  std::string label_;
  bool max_ = false;
};

}  // namespace

FRUGAL_CPU_KERNEL(MaxPool, PoolKernel);
FRUGAL_CPU_KERNEL(AveragePool, PoolKernel);
FRUGAL_CPU_KERNEL(GlobalAveragePool, GlobalPoolKernel);
FRUGAL_CPU_KERNEL(GlobalMaxPool, GlobalPoolKernel);

}  // namespace frugal::cpu
