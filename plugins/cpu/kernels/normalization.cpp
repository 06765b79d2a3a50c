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

}  // namespace

FRUGAL_CPU_KERNEL(LRN, LrnKernel);

}  // namespace frugal::cpu
