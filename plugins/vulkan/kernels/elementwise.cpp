// Add, Sub, Mul, Div with numpy broadcasting (binary.comp).
#include "frugal/model/ops/elementwise.h"

#include <algorithm>

#include "vk_kernel.h"

namespace frugal::vk {

namespace {

class BinaryKernel : public Kernel {
 public:
  explicit BinaryKernel(const KernelSpec& s) : label_(s.label()) {
    op_ = int(s.op_as<ops::Arithmetic>().fn);  // binary.comp's codes: Add 0, Sub 1, Mul 2, Div 3
    const Dims& out = s.output;
    const size_t r = out.size();
    for (size_t i = 0; i < 2; ++i) {
      const char* role = i == 0 ? "input A" : "input B";
      const InputInfo& in = required_input(s, i, role);
      if (in.constant) {
        constant_[i] = constant_floats(s, i, role);
        is_constant_[i] = true;
      } else {
        require_activation(s, i, role);
      }
      if (in.dims.size() > r)
        fail(s, std::string(role) + " " + dims_string(in.dims) + " has a higher rank than the output");
    }
    declared_dim0_ = r == 0 ? 1 : out[0];
    // Strides of a and b over the output dims (0 where broadcast). For an
    // activation of full rank, dim 0 is the batch: it always advances by one sample.
    std::vector<int64_t> sa(r), sb(r);
    for (size_t i = 0; i < 2; ++i) {
      const Dims& d = s.inputs[i].dims;
      std::vector<int64_t>& st = i == 0 ? sa : sb;
      int64_t acc = 1;
      for (size_t k = r; k-- > 0;) {
        const int64_t dim = k + d.size() >= r ? d[k + d.size() - r] : 1;
        if (dim != 1 && dim != out[k])
          fail(s, "inputs " + dims_string(s.inputs[0].dims) + " and " + dims_string(s.inputs[1].dims) +
                      " do not broadcast");
        const bool batch_dim = s.batched && k == 0 && !is_constant_[i] && d.size() == r;
        st[k] = dim == 1 && !batch_dim ? 0 : acc;
        acc *= dim;
      }
      sample_elems_[i] = is_constant_[i] || d.empty() ? 0 : product(d, 1);
    }
    // Dim 0 stays apart (it changes with the batch); the others are coalesced:
    // size-1 dims dropped, neighbours contiguous in both operands merged.
    dims_.push_back(r == 0 ? 1 : out[0]);
    a_.push_back(r == 0 ? 0 : sa[0]);
    b_.push_back(r == 0 ? 0 : sb[0]);
    for (size_t k = 1; k < r; ++k) {
      if (out[k] == 1) continue;
      if (dims_.size() > 1 && a_.back() == sa[k] * out[k] && b_.back() == sb[k] * out[k]) {
        dims_.back() *= out[k];
        a_.back() = sa[k];
        b_.back() = sb[k];
        continue;
      }
      dims_.push_back(out[k]);
      a_.push_back(sa[k]);
      b_.push_back(sb[k]);
    }
    if (dims_.size() > 6)
      unsupported(s, "broadcasting over " + std::to_string(dims_.size()) + " distinct dims (at most 6)");
    while (dims_.size() < 6) {
      dims_.push_back(1);
      a_.push_back(0);
      b_.push_back(0);
    }
    out_sample_ = r == 0 ? 1 : product(out, 1);
    u32(out_sample_, s, "values per sample");
  }

  void pack(WeightPacker& p) override {
    wg_ = p.workgroup_1d;
    p.begin_block();
    for (size_t i = 0; i < 2; ++i)
      if (is_constant_[i]) {
        const_off_[i] = p.add_floats(constant_[i]);
        const_elems_[i] = constant_[i].size();
        constant_[i] = std::vector<float>();  // the device holds it now
      }
  }

  void create_pipelines(Device& d, const ShaderSet& shaders) override {
    SpecConstants sc;
    sc.set(0, wg_).set(1, 1).set(2, 1);
    for (uint32_t k = 1; k < 6; ++k) sc.set(2 + k, uint32_t(dims_[k]));
    for (uint32_t k = 0; k < 6; ++k) {
      sc.set(8 + k, uint32_t(a_[k]));
      sc.set(14 + k, uint32_t(b_[k]));
    }
    sc.set(20, uint32_t(op_));
    pipeline_ = d.pipeline(shaders.path("binary"), sc);
  }

  void record(Recorder& r, const LayerIO& io) const override {
    const int64_t n = count(io);
    const int64_t g = samples_per_dispatch(
        r, io, {uint64_t(sample_elems_[0]) * 4, uint64_t(sample_elems_[1]) * 4, uint64_t(out_sample_) * 4},
        label_);
    for (int64_t s0 = 0; s0 < n; s0 += g) {
      const int64_t k = std::min(g, n - s0);
      Bindings b;
      for (size_t i = 0; i < 2; ++i) {
        const Slot slot = i == 0 ? kX : kY;
        if (is_constant_[i])
          b.slot[slot] = io.weights.sub(uint64_t(const_off_[i]) * 4, uint64_t(const_elems_[i]) * 4);
        else if (!io.batched || sample_elems_[i] == 0)
          b.slot[slot] = io.in[i];  // one dispatch covers it all
        else
          b.slot[slot] =
              io.in[i].sub(uint64_t(s0 * sample_elems_[i]) * 4, uint64_t(k * sample_elems_[i]) * 4);
      }
      b.slot[kO] = io.out.sub(uint64_t(s0 * out_sample_) * 4, uint64_t(k * out_sample_) * 4);
      PushConstants pc;
      pc.n = uint32_t(k);
      r.bind(pipeline_, b, pc, label_);
      r.dispatch_flat(uint64_t(k * out_sample_), wg_);
    }
  }

 private:
  std::string label_;
  int op_ = 0;
  bool is_constant_[2] = {false, false};
  std::vector<float> constant_[2];
  uint32_t const_off_[2] = {0, 0};
  size_t const_elems_[2] = {0, 0};
  int64_t sample_elems_[2] = {0, 0};  // per sample of an activation operand (0: constant or scalar)
  int64_t out_sample_ = 1;
  std::vector<int64_t> dims_, a_, b_;
  uint32_t wg_ = 64;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
};

}  // namespace

FRUGAL_VULKAN_KERNEL(Add, BinaryKernel);
FRUGAL_VULKAN_KERNEL(Sub, BinaryKernel);
FRUGAL_VULKAN_KERNEL(Mul, BinaryKernel);
FRUGAL_VULKAN_KERNEL(Div, BinaryKernel);

}  // namespace frugal::vk
