// MaxPool, AveragePool (1-D and 2-D windows), GlobalAveragePool and
// GlobalMaxPool (one window over the whole plane) on pool.comp.
#include "frugal/model/ops/pool.h"

#include "common/window.h"
#include "vk_kernel.h"

namespace frugal::vk {

using exec::Window;

namespace {

class PoolKernel : public Kernel {
 public:
  explicit PoolKernel(const KernelSpec& s) : label_(s.label()) {
    const Node& n = *s.node;
    const auto* pool = dynamic_cast<const ops::WindowPool*>(s.op);
    const auto* avg = dynamic_cast<const ops::AveragePool*>(s.op);
    max_ = dynamic_cast<const ops::MaxPool*>(s.op) || dynamic_cast<const ops::GlobalMaxPool*>(s.op);
    require_activation(s, 0, "input X");
    const Dims& x = s.inputs[0].dims;
    if (!pool) {
      // One window over the whole plane, flattened to 1 x (product of spatial dims).
      if (x.size() < 3) fail(s, "input must have rank >= 3, got " + dims_string(x));
      win_.H = 1;
      win_.W = product(x, 2);
      win_.kh = 1;
      win_.kw = win_.W;
    } else {
      const Dims& kernel = pool->kernel();
      if (kernel.size() == 3 || x.size() == 5)
        unsupported(s, "3-D pooling is not supported (1-D and 2-D are)");
      if (avg)
        for (int64_t d : pool->window.dilations)
          if (d != 1) unsupported(s, "AveragePool with dilations is not supported");
      if (max_ && n.attr_int("storage_order", 0) != 0 && s.node->outputs.size() > 1)
        unsupported(s, "storage_order applies to the Indices output, which is not supported");
      win_ = Window::from_node(s, x, kernel);
      count_include_pad_ = avg && avg->count_include_pad;
    }
    C_ = x[1];
    declared_dim0_ = x[0];
    if (product(s.output) != x[0] * C_ * win_.Ho * win_.Wo)
      fail(s, "output " + dims_string(s.output) + " differs from the computed window geometry");
    for (int64_t v : {C_ * win_.H * win_.W, C_ * win_.Ho * win_.Wo}) u32(v, s, "a pool size");
  }

  void pack(WeightPacker& p) override { wg_ = p.workgroup_1d; }

  void create_pipelines(Device& d, const ShaderSet& shaders) override {
    SpecConstants sc;
    sc.set(0, wg_).set(1, 1).set(2, 1);
    sc.set(3, uint32_t(C_))
        .set(4, uint32_t(win_.H))
        .set(5, uint32_t(win_.W))
        .set(6, uint32_t(win_.Ho))
        .set(7, uint32_t(win_.Wo));
    sc.set(8, uint32_t(win_.kh))
        .set(9, uint32_t(win_.kw))
        .set(10, uint32_t(win_.sh))
        .set(11, uint32_t(win_.sw));
    sc.set(12, uint32_t(win_.dh))
        .set(13, uint32_t(win_.dw))
        .set_int(14, int32_t(win_.pt))
        .set_int(15, int32_t(win_.pl));
    sc.set_int(16, int32_t(win_.pb)).set_int(17, int32_t(win_.pr)).set(18, count_include_pad_ ? 1 : 0);
    pipeline_ = d.pipeline(shaders.path(max_ ? "pool_max" : "pool_avg"), sc);
  }

  void record(Recorder& r, const LayerIO& io) const override {
    const uint64_t in_sample = uint64_t(C_ * win_.H * win_.W) * 4,
                   out_sample = uint64_t(C_ * win_.Ho * win_.Wo) * 4;
    const int64_t n = count(io);
    const int64_t g = samples_per_dispatch(r, io, {in_sample, out_sample}, label_);
    for (int64_t s0 = 0; s0 < n; s0 += g) {
      const int64_t k = std::min(g, n - s0);
      Bindings b;
      b.slot[kX] = io.in[0].sub(uint64_t(s0) * in_sample, uint64_t(k) * in_sample);
      b.slot[kO] = io.out.sub(uint64_t(s0) * out_sample, uint64_t(k) * out_sample);
      PushConstants pc;
      pc.n = uint32_t(k);
      r.bind(pipeline_, b, pc, label_);
      r.dispatch_flat(uint64_t(k * C_ * win_.Ho * win_.Wo), wg_);
    }
  }

 private:
  std::string label_;
  Window win_;
  int64_t C_ = 0;
  bool max_ = false, count_include_pad_ = false;
  uint32_t wg_ = 64;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
};

}  // namespace

FRUGAL_VULKAN_KERNEL(MaxPool, PoolKernel);
FRUGAL_VULKAN_KERNEL(AveragePool, PoolKernel);
FRUGAL_VULKAN_KERNEL(GlobalAveragePool, PoolKernel);
FRUGAL_VULKAN_KERNEL(GlobalMaxPool, PoolKernel);

}  // namespace frugal::vk
