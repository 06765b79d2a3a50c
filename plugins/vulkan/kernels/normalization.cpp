// LRN across channels (lrn.comp) and Softmax (softmax.comp).
#include "frugal/model/ops/normalization.h"

#include <algorithm>

#include "vk_kernel.h"

namespace frugal::vk {

namespace {

// ---- LRN ------------------------------------------------------------------------------

class LrnKernel : public FlatKernel {
 public:
  explicit LrnKernel(const KernelSpec& s) : label_(s.label()) {
    require_activation(s, 0, "input X");
    const ops::LRN& p = s.op_as<ops::LRN>();
    size_ = p.size;
    alpha_ = p.alpha;
    beta_ = p.beta;
    bias_ = p.bias;
    const Dims& d = s.inputs[0].dims;
    declared_dim0_ = d[0];
    C_ = d[1];
    inner_ = product(d, 2);
    u32(C_ * inner_, s, "values per sample");
  }
  void pack(WeightPacker& p) override { wg_ = p.workgroup_1d; }
  void create_pipelines(Device& d, const ShaderSet& shaders) override {
    SpecConstants sc;
    sc.set(3, uint32_t(C_)).set(4, uint32_t(inner_)).set(5, uint32_t(size_));
    sc.set_float(6, alpha_).set_float(7, beta_).set_float(8, bias_);
    create_flat(d, shaders, "lrn", sc);
  }
  void record(Recorder& r, const LayerIO& io) const override {
    const uint64_t per = uint64_t(C_ * inner_);
    record_flat(r, io, per * 4, per * 4, per, label_);
  }

 private:
  std::string label_;
  int64_t size_ = 1, C_ = 1, inner_ = 1;
  float alpha_ = 1e-4f, beta_ = 0.75f, bias_ = 1.0f;
};

// ---- Softmax ----------------------------------------------------------------------------
// Opset >= 13: along one axis (default -1). Opset < 13: the input seen as 2-D
// [prod(dims[:axis]), prod(dims[axis:])] (default axis 1), each row normalised.

class SoftmaxKernel : public FlatKernel {
 public:
  explicit SoftmaxKernel(const KernelSpec& s) : label_(s.label()) {
    require_activation(s, 0, "input");
    const Dims& d = s.inputs[0].dims;
    const ops::Softmax& op = s.op_as<ops::Softmax>();
    const bool coerce_2d = op.coerce_2d;
    const int64_t axis = normalize_axis(s, op.axis, int64_t(d.size()));
    len_ = coerce_2d ? product(d, size_t(axis)) : d[size_t(axis)];
    inner_ = coerce_2d ? 1 : product(d, size_t(axis) + 1);
    mixes_ = axis == 0;
    declared_dim0_ = d[0];
    sample_elems_ = product(d, 1);
    u32(product(d), s, "input size");
  }
  bool mixes_samples() const override { return mixes_; }
  void pack(WeightPacker& p) override { wg_ = p.workgroup_1d; }
  void create_pipelines(Device& d, const ShaderSet& shaders) override {
    SpecConstants sc;
    sc.set(3, uint32_t(len_)).set(4, uint32_t(inner_));
    create_flat(d, shaders, "softmax", sc);
  }
  void record(Recorder& r, const LayerIO& io) const override {
    if (mixes_) {  // the whole tensor is one unit
      const uint32_t rows = uint32_t(declared_dim0_ * sample_elems_ / len_);
      Bindings b;
      b.slot[kX] = io.in[0];
      b.slot[kO] = io.out;
      PushConstants pc;
      pc.n = 1;
      pc.p0 = rows;
      r.bind(pipeline_, b, pc, label_);
      r.dispatch_flat(rows, wg_);
      return;
    }
    const uint32_t rows_per_sample = uint32_t(sample_elems_ / len_);
    record_flat(r, io, uint64_t(sample_elems_) * 4, uint64_t(sample_elems_) * 4, rows_per_sample, label_,
                rows_per_sample);
  }

 private:
  std::string label_;
  int64_t len_ = 1, inner_ = 1, sample_elems_ = 1;
  bool mixes_ = false;
};

}  // namespace

FRUGAL_VULKAN_KERNEL(LRN, LrnKernel);
FRUGAL_VULKAN_KERNEL(Softmax, SoftmaxKernel);

}  // namespace frugal::vk
