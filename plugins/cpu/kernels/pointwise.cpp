// Ops that map each value on its own (per channel at most): BatchNormalization
// (inference form, an affine map per channel), every activation (Relu, Clip,
// Sigmoid, HardSigmoid, HardSwish, LeakyRelu: ops::Activation), Identity and
// Dropout (inference: identity). As the head of a layer they copy the input to
// the output and apply their epilogue; bundled after a Conv/Gemm/BN they become
// steps of that layer's epilogue instead (common/layer_graph.cpp).
#include <cmath>
#include <cstring>
#include <limits>

#include "common/elementwise_fn.h"
#include "frugal/model/ops/shape_ops.h"
#include "kernels/epilogue.h"
#include "kernels/kernel_util.h"

namespace frugal::cpu {

namespace {

class PointwiseKernel : public Kernel {
 public:
  explicit PointwiseKernel(const KernelSpec& s) : label_(s.label()) {
    require_float_activation(s, 0, "input X");
    append_to_epilogue(s, epilogue_);
    channels_ = epilogue_.channels();
  }

  Epilogue* epilogue() override { return &epilogue_; }

  void run(const KernelArgs& a) const override {
    const Dims& d = a.in_dims[0];
    const int64_t outer = d.size() >= 2 ? d[0] : 1, channels = d.size() >= 2 ? d[1] : 1;
    const int64_t inner = d.size() >= 2 ? product(d, 2) : product(d);
    const int64_t planes = outer * channels;
    if (planes * inner == 0) return;
    parallel_range(a.pool, planes, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, inner)),
                   [&](int64_t p0, int64_t p1) {
                     for (int64_t p = p0; p < p1; ++p) {
                       std::memcpy(a.out + p * inner, a.in[0] + p * inner, sizeof(float) * size_t(inner));
                       if (inner > 1 || channels == 1)
                         epilogue_.apply(a.out + p * inner, p % channels, inner);
                     }
                   });
    if (inner == 1 && channels > 1) epilogue_.apply_rows(a.out, outer, channels);
  }

 private:
  std::string label_;
  Epilogue epilogue_;
  int64_t channels_ = 0;
};

// Cast between float32 and bool (held as 0 / 1): to bool, every non-zero value
// (NaN included) becomes 1; otherwise the values are copied.
class CastKernel : public Kernel {
 public:
  explicit CastKernel(const KernelSpec& s) {
    const DType to = s.op_as<ops::Cast>().to;
    if (to != DType::Float32 && to != DType::Bool)
      unsupported(s, std::string("cast to ") + dtype_name(to) + " is not supported (float32 and bool are)");
    exec::require_operand(s, 0, "input", true);
    if (s.inputs[0].constant) unsupported(s, "input '" + s.inputs[0].name + "' is a constant");
    to_bool_ = to == DType::Bool && s.inputs[0].dtype != DType::Bool;
  }

  void run(const KernelArgs& a) const override {
    const int64_t n = product(a.in_dims[0]);
    if (!to_bool_) {
      std::memcpy(a.out, a.in[0], sizeof(float) * size_t(n));
      return;
    }
    parallel_range(a.pool, n, 32768, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) a.out[i] = a.in[0][i] != 0.0f ? 1.0f : 0.0f;
    });
  }

 private:
  bool to_bool_ = false;
};

}  // namespace

FRUGAL_CPU_KERNEL(Cast, CastKernel);
FRUGAL_CPU_ACTIVATIONS(PointwiseKernel);
FRUGAL_CPU_KERNEL(BatchNormalization, PointwiseKernel);
FRUGAL_CPU_KERNEL(Identity, PointwiseKernel);
FRUGAL_CPU_KERNEL(Dropout, PointwiseKernel);

}  // namespace frugal::cpu
