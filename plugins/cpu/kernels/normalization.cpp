// LRN across channels and Softmax.
#include "frugal/model/ops/normalization.h"

#include <algorithm>
#include <cmath>

#include "kernels/kernel_util.h"

namespace frugal::cpu {

namespace {

// LRN across channels: y = x / (bias + alpha / size * sum of x^2 over the
// channel window [c - floor((size-1)/2), c + ceil((size-1)/2)])^beta.
class LrnKernel : public Kernel {
 public:
  explicit LrnKernel(const KernelSpec& s) : label_(s.label()) {
    require_float_activation(s, 0, "input X");
    const ops::LRN& p = s.op_as<ops::LRN>();
    size_ = p.size;
    alpha_ = p.alpha;
    beta_ = p.beta;
    bias_ = p.bias;
  }

  void run(const KernelArgs& a) const override {
    const Dims& d = a.in_dims[0];
    const int64_t N = d[0], C = d[1], inner = product(d, 2);
    const int64_t below = (size_ - 1) / 2, above = size_ - 1 - below;
    const double k = double(alpha_) / double(size_);
    parallel_range(a.pool, N * C, 1, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t n = p / C, c = p % C;
        const int64_t c0 = std::max<int64_t>(0, c - below), c1 = std::min<int64_t>(C - 1, c + above);
        const float* x = a.in[0] + n * C * inner;
        float* y = a.out + p * inner;
        for (int64_t i = 0; i < inner; ++i) {
          double sq = 0.0;
          for (int64_t cc = c0; cc <= c1; ++cc) {
            const double v = x[cc * inner + i];
            sq += v * v;
          }
          y[i] = float(double(x[c * inner + i]) / std::pow(double(bias_) + k * sq, double(beta_)));
        }
      }
    });
  }

 private:
  std::string label_;
  int64_t size_ = 1;
  float alpha_ = 1e-4f, beta_ = 0.75f, bias_ = 1.0f;
};

// Softmax. Opset >= 13: along one axis (default -1). Opset < 13: the input is
// seen as 2-D [prod(dims[:axis]), prod(dims[axis:])] (default axis 1) and each
// row is normalised. Max-subtracted, sums in double.
class SoftmaxKernel : public Kernel {
 public:
  explicit SoftmaxKernel(const KernelSpec& s) : label_(s.label()) {
    require_float_activation(s, 0, "input");
    const ops::Softmax& op = s.op_as<ops::Softmax>();
    coerce_2d_ = op.coerce_2d;
    axis_ = op.axis;
  }
  bool mixes_samples(const std::vector<Dims>& in) const override { return axis_of(in[0]) == 0; }

  void run(const KernelArgs& a) const override {
    const Dims& d = a.in_dims[0];
    const size_t axis = size_t(axis_of(d));
    const int64_t outer = product(d, 0, axis);
    const int64_t len = coerce_2d_ ? product(d, axis) : d[axis];
    const int64_t inner = coerce_2d_ ? 1 : product(d, axis + 1);
    parallel_range(a.pool, outer, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, len * inner)),
                   [&](int64_t o0, int64_t o1) {
                     for (int64_t o = o0; o < o1; ++o) {
                       for (int64_t i = 0; i < inner; ++i) {
                         const float* x = a.in[0] + o * len * inner + i;
                         float* y = a.out + o * len * inner + i;
                         float mx = x[0];
                         for (int64_t k = 1; k < len; ++k) mx = std::max(mx, x[k * inner]);
                         double sum = 0.0;
                         for (int64_t k = 0; k < len; ++k) {
                           const float e = std::exp(x[k * inner] - mx);
                           y[k * inner] = e;
                           sum += e;
                         }
                         const float inv = float(1.0 / sum);
                         for (int64_t k = 0; k < len; ++k) y[k * inner] *= inv;
                       }
                     }
                   });
  }

 private:
  int64_t axis_of(const Dims& d) const {
    const int64_t r = int64_t(d.size());
    if (axis_ < -r || axis_ >= r)
      throw Error(label_ + ": axis " + std::to_string(axis_) + " is out of range for " + dims_string(d));
    return axis_ < 0 ? axis_ + r : axis_;
  }
  std::string label_;
  int64_t axis_ = -1;
  bool coerce_2d_ = false;
};

}  // namespace

FRUGAL_CPU_KERNEL(LRN, LrnKernel);
FRUGAL_CPU_KERNEL(Softmax, SoftmaxKernel);

}  // namespace frugal::cpu
