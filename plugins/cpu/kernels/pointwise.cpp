// Ops that map each value on its own (per channel at most): BatchNormalization
// (inference form, an affine map per channel), Relu, Clip, Sigmoid, Identity and
// Dropout (inference: identity). As the head of a layer they copy the input to
// the output and apply their epilogue; bundled after a Conv/Gemm/BN they become
// steps of that layer's epilogue instead (see compile.cpp).
#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/kernel_util.h"
#include "kernels/normalization.h"
#include "kernels/pointwise.h"

namespace frugal::cpu {

namespace {

float clip_bound(const KernelSpec& s, size_t i, const char* attr, float dflt) {
  if (s.opset < 11) return s.node->attr_float(attr, dflt);
  if (!has_input(s, i)) return dflt;
  const std::vector<float> v = constant_floats(s, i, i == 1 ? "min" : "max");
  if (v.size() != 1) fail(s, std::string(i == 1 ? "min" : "max") + " must be a scalar");
  return v[0];
}

class PointwiseKernel : public Kernel {
 public:
  explicit PointwiseKernel(const KernelSpec& s) : label_(s.label()) {
    require_float_activation(s, 0, "input X");
    append_to_epilogue(s, epilogue_);
    channels_ = epilogue_.channels();
  }

  Dims infer(const std::vector<Dims>& in) const override {
    if (channels_ > 0 && (in[0].size() < 2 || in[0][1] != channels_))
      throw Error(label_ + ": input " + dims_string(in[0]) + " does not have " + std::to_string(channels_) +
                  " channels on axis 1");
    return in[0];
  }

  Epilogue* epilogue() override { return &epilogue_; }

  void run(const KernelArgs& a) const override {
    const Dims& d = a.in_dims[0];
    const int64_t outer = d.size() >= 2 ? d[0] : 1, channels = d.size() >= 2 ? d[1] : 1;
    const int64_t inner = d.size() >= 2 ? product(d, 2) : product(d);
    const int64_t planes = outer * channels;
    if (planes * inner == 0) return;
    parallel_range(a.pool, planes, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, inner)), [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        std::memcpy(a.out + p * inner, a.in[0] + p * inner, sizeof(float) * size_t(inner));
        if (inner > 1 || channels == 1) epilogue_.apply(a.out + p * inner, p % channels, inner);
      }
    });
    if (inner == 1 && channels > 1) epilogue_.apply_rows(a.out, outer, channels);
  }

 private:
  std::string label_;
  Epilogue epilogue_;
  int64_t channels_ = 0;
};

}  // namespace

void append_to_epilogue(const KernelSpec& s, Epilogue& e) {
  const Node& n = *s.node;
  const std::string& t = n.op_type;
  if (t == "BatchNormalization") {
    std::vector<float> scale, shift;
    batchnorm_affine(s, scale, shift);
    e.add_affine(scale, shift);
  } else if (t == "Relu") {
    e.add_relu();
  } else if (t == "Sigmoid") {
    e.add_sigmoid();
  } else if (t == "Clip") {
    const float lo = clip_bound(s, 1, "min", -std::numeric_limits<float>::infinity());
    const float hi = clip_bound(s, 2, "max", std::numeric_limits<float>::infinity());
    e.add_clip(lo, hi);
  } else if (t == "Dropout") {
    if (s.opset < 7 && n.attr_int("is_test", 0) == 0) unsupported(s, "training mode (is_test=0) is not supported");
    if (has_input(s, 2)) {
      const InputInfo& tm = s.inputs[2];
      if (!tm.constant) unsupported(s, "training_mode '" + tm.name + "' is computed at run time (inference only)");
      const std::vector<int64_t> v = tm.value->dtype == DType::Bool
                                         ? std::vector<int64_t>(tm.value->data.begin(), tm.value->data.end())
                                         : tm.value->as_int64();
      if (!v.empty() && v[0] != 0) unsupported(s, "training mode is not supported (inference only)");
    }
  } else if (t == "Identity") {
    // nothing to do
  } else {
    fail(s, "not a pointwise op");
  }
}

std::unique_ptr<Kernel> make_pointwise(const KernelSpec& s) { return std::make_unique<PointwiseKernel>(s); }

}  // namespace frugal::cpu
