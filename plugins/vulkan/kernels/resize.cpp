// Resize, mode nearest (any spatial rank), on resize.comp: each output value
// copies the input value a compile-time table names (common/resize_nearest.h),
// kept in the weights buffer.
#include <algorithm>

#include "common/resize_nearest.h"
#include "vk_kernel.h"

namespace frugal::vk {

namespace {

class ResizeKernel : public Kernel {
 public:
  explicit ResizeKernel(const KernelSpec& s) : label_(s.label()), r_(exec::ResizeNearest::from_spec(s)) {
    require_activation(s, 0, "input X");
    const Dims& x = s.inputs[0].dims;
    declared_dim0_ = x[0];
    channels_ = x[1];
    out_plane_ = int64_t(r_.source.size());
    for (int64_t v : {channels_ * r_.in_plane, channels_ * out_plane_}) u32(v, s, "values per sample");
  }

  void pack(WeightPacker& p) override {
    wg_ = p.workgroup_1d;
    p.begin_block();
    table_off_ = p.add_words(std::vector<uint32_t>(r_.source.begin(), r_.source.end()));
    r_.source = std::vector<int64_t>();  // the device holds it now
  }

  void create_pipelines(Device& d, const ShaderSet& shaders) override {
    SpecConstants sc;
    sc.set(0, wg_).set(1, 1).set(2, 1).set(3, uint32_t(r_.in_plane)).set(4, uint32_t(out_plane_));
    pipeline_ = d.pipeline(shaders.path("resize"), sc);
  }

  void record(Recorder& r, const LayerIO& io) const override {
    const uint64_t in_sample = uint64_t(channels_ * r_.in_plane) * 4,
                   out_sample = uint64_t(channels_ * out_plane_) * 4;
    const int64_t n = count(io);
    const int64_t g = samples_per_dispatch(r, io, {in_sample, out_sample}, label_);
    for (int64_t s0 = 0; s0 < n; s0 += g) {
      const int64_t k = std::min(g, n - s0);
      Bindings b;
      b.slot[kX] = io.in[0].sub(uint64_t(s0) * in_sample, uint64_t(k) * in_sample);
      b.slot[kO] = io.out.sub(uint64_t(s0) * out_sample, uint64_t(k) * out_sample);
      b.slot[kU] = io.weights.sub(uint64_t(table_off_) * 4, uint64_t(out_plane_) * 4);
      PushConstants pc;
      pc.n = uint32_t(k * channels_);
      r.bind(pipeline_, b, pc, label_);
      r.dispatch_flat(uint64_t(k * channels_ * out_plane_), wg_);
    }
  }

 private:
  std::string label_;
  exec::ResizeNearest r_;
  int64_t channels_ = 1, out_plane_ = 1;
  uint32_t table_off_ = 0, wg_ = 64;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
};

}  // namespace

FRUGAL_VULKAN_KERNEL(Resize, ResizeKernel);

}  // namespace frugal::vk
