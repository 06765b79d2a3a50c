// Softmax. Opset >= 13: along one axis (default -1). Opset < 13: the input is
// seen as 2-D [prod(dims[:axis]), prod(dims[axis:])] (default axis 1) and each
// row is normalised. Max-subtracted, sums in double.
#include <cmath>

#include "frugal/model/ops/normalization.h"
#include "kernels/kernel_util.h"

namespace frugal::cpu {

namespace {

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

FRUGAL_CPU_KERNEL(Softmax, SoftmaxKernel);

}  // namespace frugal::cpu
