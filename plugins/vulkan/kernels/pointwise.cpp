// BatchNormalization and every activation (ops::Activation) as the head of a
// layer: the input copied through the per-channel epilogue (pointwise.comp).
#include <algorithm>

#include "vk_kernel.h"

namespace frugal::vk {

namespace {

class PointwiseKernel : public FlatKernel {
 public:
  explicit PointwiseKernel(const KernelSpec& s) : label_(s.label()) {
    require_activation(s, 0, "input X");
    append_to_epilogue(s, epilogue_);
    const Dims& d = s.inputs[0].dims;
    declared_dim0_ = d.empty() ? 1 : d[0];
    channels_ = d.size() >= 2 ? d[1] : 1;
    inner_ = d.size() >= 2 ? product(d, 2) : 1;
    if (epilogue_.channels() > 0 && epilogue_.channels() != channels_)
      fail(s, "input " + dims_string(d) + " does not have " + std::to_string(epilogue_.channels()) +
                  " channels on axis 1");
    u32(channels_ * inner_, s, "values per sample");
  }
  Epilogue* epilogue() override { return &epilogue_; }
  void pack(WeightPacker& p) override {
    p.begin_block();
    epilogue_.pack(p);
    wg_ = p.workgroup_1d;
  }
  void create_pipelines(Device& d, const ShaderSet& shaders) override {
    SpecConstants sc;
    sc.set(3, uint32_t(channels_)).set(4, uint32_t(inner_));
    epilogue_.specialize(sc, uint32_t(channels_));
    create_flat(d, shaders, "pointwise", sc);
  }
  void record(Recorder& r, const LayerIO& io) const override {
    const uint64_t per = uint64_t(channels_ * inner_);
    record_flat(r, io, per * 4, per * 4, per, label_);
  }

 private:
  std::string label_;
  Epilogue epilogue_;
  int64_t channels_ = 1, inner_ = 1;
};

}  // namespace

FRUGAL_VULKAN_ACTIVATIONS(PointwiseKernel);
FRUGAL_VULKAN_KERNEL(BatchNormalization, PointwiseKernel);

}  // namespace frugal::vk
