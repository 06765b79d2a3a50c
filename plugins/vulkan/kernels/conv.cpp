// Conv (conv.comp).
//
// Conv is gating-ready: by default (conv_gated.spv) every sample's output
// kernels come from a list of active kernel indices, launched with one
// vkCmdDispatchIndirect per sample whose group count holds the list's length.
// Ungated, the list is 0..M-1 and the arguments {groups, M, 1} are constants in
// the weights buffer; gated, gate_indices.spv writes both on the device from
// the gate values, and the output is zeroed first so that switched-off kernels
// read 0. With option {"conv": "dense"} layers use conv_dense.spv instead (one
// plain dispatch), so the indirection's cost can be measured.
#include "frugal/model/ops/conv.h"

#include <cstring>

#include "common/window.h"
#include "frugal/error.h"
#include "vk_kernel.h"

namespace frugal::vk {

using exec::Window;

namespace {

class ConvKernel : public Kernel {
 public:
  explicit ConvKernel(const KernelSpec& s) : label_(s.label()) {
    require_activation(s, 0, "input X");
    const InputInfo& x = s.inputs[0];
    exec::ConvShape c = exec::ConvShape::from_spec(s);
    weights_ = std::move(c.weights);
    win_ = c.window;
    group_ = c.group;
    C_ = c.C;
    M_ = c.M;
    Cg_ = c.Cg;
    if (!c.bias.empty()) epilogue_.add_affine(std::vector<float>(size_t(M_), 1.0f), c.bias);
    const Dims want =
        win_.spatial_rank == 2 ? Dims{x.dims[0], M_, win_.Ho, win_.Wo} : Dims{x.dims[0], M_, win_.Wo};
    if (s.output != want)
      fail(s, "output " + dims_string(s.output) + " differs from the computed " + dims_string(want));
    for (int64_t v :
         {C_, win_.H, win_.W, M_, win_.Ho * win_.Wo, C_ * win_.H * win_.W, M_ * win_.Ho * win_.Wo})
      u32(v, s, "a conv size");
    declared_dim0_ = x.dims[0];
    kpt_ = group_ == 1 ? 4 : 1;  // kernels of one group share their input loads
    list_len_ = (M_ + kpt_ - 1) / kpt_ * kpt_;
  }

  Epilogue* epilogue() override { return &epilogue_; }
  int64_t gate_channels() const override { return M_; }
  int64_t gate_list_length() const override { return list_len_; }
  void set_gating(const Gating* g) override { gating_ = g; }

  void pack(WeightPacker& p) override {
    p.begin_block();
    p.add_floats(weights_);           // [M, Cg, kh, kw] at word 0 of the block
    weights_ = std::vector<float>();  // the device holds them now
    epilogue_.pack(p);
    std::vector<uint32_t> all(static_cast<size_t>(list_len_), uint32_t(M_));  // padded with M: no kernel
    for (int64_t m = 0; m < M_; ++m) all[size_t(m)] = uint32_t(m);
    index_off_ = p.add_words(all);
    wg_ = p.workgroup_1d;
    groups_x_ = uint32_t((win_.Ho * win_.Wo + wg_ - 1) / wg_);
    args_off_ = p.add_words({groups_x_, uint32_t(list_len_ / kpt_), 1});  // the ungated indirect dispatch
  }

  void create_pipelines(Device& d, const ShaderSet& shaders) override {
    SpecConstants sc;
    sc.set(0, wg_).set(1, 1).set(2, 1);
    sc.set(3, uint32_t(C_)).set(4, uint32_t(win_.H)).set(5, uint32_t(win_.W)).set(6, uint32_t(M_));
    sc.set(7, uint32_t(win_.Ho))
        .set(8, uint32_t(win_.Wo))
        .set(9, uint32_t(win_.kh))
        .set(10, uint32_t(win_.kw));
    sc.set(11, uint32_t(win_.sh))
        .set(12, uint32_t(win_.sw))
        .set(13, uint32_t(win_.dh))
        .set(14, uint32_t(win_.dw));
    sc.set_int(15, int32_t(win_.pt))
        .set_int(16, int32_t(win_.pl))
        .set(17, uint32_t(Cg_))
        .set(18, uint32_t(M_ / group_));
    sc.set(19, uint32_t(kpt_));
    epilogue_.specialize(sc, uint32_t(M_));
    dense_ = shaders.dense_conv;
    pipeline_ = d.pipeline(shaders.path(dense_ ? "conv_dense" : "conv_gated"), sc);
    SpecConstants gs;
    gs.set(0, 64).set(1, 1).set(2, 1).set(3, uint32_t(M_)).set(4, groups_x_).set(5, uint32_t(kpt_));
    gate_pipeline_ = d.pipeline(shaders.path("gate_indices"), gs);
  }

  void record(Recorder& r, const LayerIO& io) const override {
    const uint64_t in_sample = uint64_t(C_ * win_.H * win_.W) * 4,
                   out_sample = uint64_t(M_ * win_.Ho * win_.Wo) * 4;
    const int64_t n = count(io);
    const int64_t g = samples_per_dispatch(r, io, {in_sample, out_sample}, label_);
    const bool gated = gating_ != nullptr && !dense_;
    if (gated) {
      if (gating_->n != n)
        throw Error(label_ + ": gates were set for " + std::to_string(gating_->n) + " samples, the run has " +
                    std::to_string(n));
      // Active lists and dispatch arguments from the gate values, on the device.
      PushConstants pc;
      pc.n = uint32_t(n);
      uint32_t bits;
      std::memcpy(&bits, &gating_->threshold, 4);
      pc.p0 = bits;
      pc.p1 = uint32_t((gating_->args.offset - gating_->indices.offset) / 4);
      Bindings b;
      b.slot[kX] = gating_->values;
      b.slot[kU] = Region{gating_->indices.buffer, gating_->indices.offset,
                          gating_->args.offset + gating_->args.bytes - gating_->indices.offset};
      r.bind(gate_pipeline_, b, pc, label_ + " (gates)");
      r.dispatch_flat(uint64_t(n), 64);
      r.fill(io.out, 0);  // switched-off kernels read 0
      r.barrier();
    }
    for (int64_t s0 = 0; s0 < n; s0 += g) {
      const int64_t k = std::min(g, n - s0);
      Bindings b;
      b.slot[kX] = io.in[0].sub(uint64_t(s0) * in_sample, uint64_t(k) * in_sample);
      b.slot[kO] = io.out.sub(uint64_t(s0) * out_sample, uint64_t(k) * out_sample);
      b.slot[kW] = io.weights;
      PushConstants pc;
      pc.n = uint32_t(k);
      if (dense_) {
        r.bind(pipeline_, b, pc, label_);
        r.dispatch(groups_x_, uint32_t(list_len_ / kpt_), uint32_t(k));
        continue;
      }
      if (gated)
        b.slot[kU] = gating_->indices.sub(uint64_t(s0 * list_len_) * 4, uint64_t(k * list_len_) * 4);
      else
        b.slot[kU] = io.weights.sub(uint64_t(index_off_) * 4, uint64_t(list_len_) * 4);
      r.bind(pipeline_, b, pc, label_);
      const uint32_t list0 = pc.u_off;
      for (int64_t s = 0; s < k; ++s) {
        pc.s = uint32_t(s);
        pc.u_off = list0 + (gated ? uint32_t(s * list_len_) : 0u);
        r.push(pc);
        if (gated)
          r.dispatch_indirect(gating_->args.buffer, gating_->args.offset + uint64_t(s0 + s) * 12);
        else
          r.dispatch_indirect(io.weights.buffer, io.weights.offset + uint64_t(args_off_) * 4);
      }
    }
  }

 private:
  std::string label_;
  Window win_;
  int64_t group_ = 1, C_ = 0, M_ = 0, Cg_ = 0;
  int64_t kpt_ = 1, list_len_ = 1;  // kernels per invocation; active-list length (M padded to kpt_)
  std::vector<float> weights_;
  Epilogue epilogue_;
  uint32_t index_off_ = 0, args_off_ = 0;
  uint32_t wg_ = 64, groups_x_ = 1;
  bool dense_ = false;
  VkPipeline pipeline_ = VK_NULL_HANDLE, gate_pipeline_ = VK_NULL_HANDLE;
  const Gating* gating_ = nullptr;
};

}  // namespace

FRUGAL_VULKAN_KERNEL(Conv, ConvKernel);

}  // namespace frugal::vk
