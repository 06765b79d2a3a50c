// Resize, mode nearest (any spatial rank): each output value copies the input
// value the compile-time table names (common/resize_nearest.h).
#include "common/resize_nearest.h"
#include "kernels/kernel_util.h"

namespace frugal::cpu {

namespace {

class ResizeKernel : public Kernel {
 public:
  explicit ResizeKernel(const KernelSpec& s) : r_(exec::ResizeNearest::from_spec(s)) {
    require_float_activation(s, 0, "input X");
  }

  void run(const KernelArgs& a) const override {
    const int64_t planes = a.in_dims[0][0] * a.in_dims[0][1], out_plane = int64_t(r_.source.size());
    parallel_range(a.pool, planes, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, out_plane)),
                   [&](int64_t p0, int64_t p1) {
                     for (int64_t p = p0; p < p1; ++p) {
                       const float* x = a.in[0] + p * r_.in_plane;
                       float* y = a.out + p * out_plane;
                       for (int64_t i = 0; i < out_plane; ++i) y[i] = x[r_.source[size_t(i)]];
                     }
                   });
  }

 private:
  exec::ResizeNearest r_;
};

}  // namespace

FRUGAL_CPU_KERNEL(Resize, ResizeKernel);

}  // namespace frugal::cpu
