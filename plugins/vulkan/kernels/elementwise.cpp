// Add, Sub, Mul, Div, Greater, GreaterOrEqual (bool results as 0 / 1), Where
// (condition, X, Y) with numpy broadcasting, and Cast between float32 and bool,
// on elementwise.comp.
#include <algorithm>
#include <array>

#include "common/elementwise_fn.h"
#include "frugal/model/ops/shape_ops.h"
#include "vk_kernel.h"

namespace frugal::vk {

using exec::ElementwiseFn;

namespace {

constexpr size_t kMaxDims = 6;  // elementwise.comp's D0..D5

class ElementwiseKernel : public Kernel {
 public:
  explicit ElementwiseKernel(const KernelSpec& s) : ElementwiseKernel(s, exec::elementwise_fn(s)) {}

 protected:
  ElementwiseKernel(const KernelSpec& s, ElementwiseFn fn)
      : label_(s.label()), fn_(fn), n_(exec::operand_count(fn)) {
    static const char* roles[2][3] = {{"input A", "input B", ""}, {"condition", "input X", "input Y"}};
    const bool where = fn == ElementwiseFn::Where;
    const Dims& out = s.output;
    const size_t r = out.size();
    for (size_t i = 0; i < n_; ++i) {
      const char* role = fn == ElementwiseFn::NonZero ? "input" : roles[where][i];
      const InputInfo& in = required_input(s, i, role);
      exec::require_operand(s, i, role, (where && i == 0) || fn == ElementwiseFn::NonZero);
      if (in.constant) constant_[i] = exec::constant_values(s, i, role);
      is_constant_[i] = in.constant;
      if (in.dims.size() > r)
        fail(s, std::string(role) + " " + dims_string(in.dims) + " has a higher rank than the output");
    }
    declared_dim0_ = r == 0 ? 1 : out[0];
    coalesce(s, out);
    out_sample_ = r == 0 ? 1 : product(out, 1);
    u32(out_sample_, s, "values per sample");
    takes_epilogue_ = fn == ElementwiseFn::Add && r >= 2;
    channels_ = r >= 2 ? out[1] : 1;
    inner_ = r >= 2 ? product(out, 2) : 1;
  }

 public:
  // An Add with channels takes the activations after it (a residual Add + Relu in one pass).
  Epilogue* epilogue() override { return takes_epilogue_ ? &epilogue_ : nullptr; }

  void pack(WeightPacker& p) override {
    wg_ = p.workgroup_1d;
    p.begin_block();
    for (size_t i = 0; i < n_; ++i)
      if (is_constant_[i]) {
        const_off_[i] = p.add_floats(constant_[i]);
        const_elems_[i] = constant_[i].size();
        constant_[i] = std::vector<float>();  // the device holds it now
      }
    epilogue_.pack(p);
  }

  void create_pipelines(Device& d, const ShaderSet& shaders) override {
    SpecConstants sc;
    sc.set(0, wg_).set(1, 1).set(2, 1);
    for (uint32_t k = 1; k < kMaxDims; ++k) sc.set(2 + k, uint32_t(dims_[k]));
    for (uint32_t i = 0; i < 3; ++i)
      for (uint32_t k = 0; k < kMaxDims; ++k) sc.set(8 + 6 * i + k, uint32_t(strides_[i][k]));
    sc.set(26, uint32_t(fn_)).set(27, uint32_t(channels_)).set(28, uint32_t(inner_));
    epilogue_.specialize(sc, uint32_t(channels_));
    pipeline_ = d.pipeline(shaders.path("elementwise"), sc);
  }

  void record(Recorder& r, const LayerIO& io) const override {
    const int64_t n = count(io);
    std::vector<uint64_t> sample_bytes{uint64_t(out_sample_) * 4};
    for (size_t i = 0; i < n_; ++i) sample_bytes.push_back(uint64_t(sample_elems_[i]) * 4);
    const int64_t g = samples_per_dispatch(r, io, sample_bytes, label_);
    for (int64_t s0 = 0; s0 < n; s0 += g) {
      const int64_t k = std::min(g, n - s0);
      Bindings b;
      for (size_t i = 0; i < 3; ++i) {
        const Slot slot = i == 0 ? kX : i == 1 ? kY : kZ;
        if (i >= n_) continue;  // unread: the recorder binds a dummy
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
  // Strides of each operand over the output dims (0 where broadcast); for an
  // activation of full rank, dim 0 is the batch: it always advances by one
  // sample. Dim 0 stays apart (it changes with the batch); the others are
  // coalesced: size-1 dims dropped, neighbours contiguous in every operand merged.
  void coalesce(const KernelSpec& s, const Dims& out) {
    const size_t r = out.size();
    std::array<std::vector<int64_t>, 3> st;
    for (size_t i = 0; i < n_; ++i) {
      const Dims& d = s.inputs[i].dims;
      st[i].assign(r, 0);
      int64_t acc = 1;
      for (size_t k = r; k-- > 0;) {
        const int64_t dim = k + d.size() >= r ? d[k + d.size() - r] : 1;
        if (dim != 1 && dim != out[k])
          fail(s, "input " + dims_string(d) + " does not broadcast to " + dims_string(out));
        const bool batch_dim = s.batched && k == 0 && !is_constant_[i] && d.size() == r;
        st[i][k] = dim == 1 && !batch_dim ? 0 : acc;
        acc *= dim;
      }
      sample_elems_[i] = is_constant_[i] || d.empty() ? 0 : product(d, 1);
    }
    dims_.push_back(r == 0 ? 1 : out[0]);
    for (size_t i = 0; i < n_; ++i) strides_[i].push_back(r == 0 ? 0 : st[i][0]);
    for (size_t k = 1; k < r; ++k) {
      if (out[k] == 1) continue;
      bool merge = dims_.size() > 1;
      for (size_t i = 0; merge && i < n_; ++i) merge = strides_[i].back() == st[i][k] * out[k];
      if (merge) {
        dims_.back() *= out[k];
        for (size_t i = 0; i < n_; ++i) strides_[i].back() = st[i][k];
        continue;
      }
      dims_.push_back(out[k]);
      for (size_t i = 0; i < n_; ++i) strides_[i].push_back(st[i][k]);
    }
    if (dims_.size() > kMaxDims)
      unsupported(s, "broadcasting over " + std::to_string(dims_.size()) + " distinct dims (at most 6)");
    dims_.resize(kMaxDims, 1);
    for (std::vector<int64_t>& v : strides_) v.resize(kMaxDims, 0);
  }

  std::string label_;
  ElementwiseFn fn_;
  size_t n_;
  bool takes_epilogue_ = false;
  Epilogue epilogue_;
  int64_t channels_ = 1, inner_ = 1;  // the output's axis 1 and the values per channel
  bool is_constant_[3] = {false, false, false};
  std::vector<float> constant_[3];
  uint32_t const_off_[3] = {0, 0, 0};
  size_t const_elems_[3] = {0, 0, 0};
  int64_t sample_elems_[3] = {0, 0, 0};  // per sample of an activation operand (0: constant or scalar)
  int64_t out_sample_ = 1;
  std::vector<int64_t> dims_;
  std::array<std::vector<int64_t>, 3> strides_;
  uint32_t wg_ = 64;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
};

// Cast between float32 and bool (held as 0 / 1): to bool is NonZero on the
// shader; otherwise the values are copied.
class CastKernel : public ElementwiseKernel {
 public:
  explicit CastKernel(const KernelSpec& s) : ElementwiseKernel(s, ElementwiseFn::NonZero) {
    const DType to = s.op_as<ops::Cast>().to;
    if (to != DType::Float32 && to != DType::Bool)
      unsupported(s, std::string("cast to ") + dtype_name(to) + " is not supported (float32 and bool are)");
    if (s.inputs[0].constant) unsupported(s, "input '" + s.inputs[0].name + "' is a constant");
    copy_ = to != DType::Bool || s.inputs[0].dtype == DType::Bool;
    declared_dim0_ = s.inputs[0].dims.empty() ? 1 : s.inputs[0].dims[0];
    sample_bytes_ = uint64_t(s.inputs[0].dims.empty() ? 1 : product(s.inputs[0].dims, 1)) * 4;
  }
  void create_pipelines(Device& d, const ShaderSet& shaders) override {
    if (!copy_) ElementwiseKernel::create_pipelines(d, shaders);
  }
  void record(Recorder& r, const LayerIO& io) const override {
    if (!copy_) return ElementwiseKernel::record(r, io);
    const uint64_t bytes = uint64_t(count(io)) * sample_bytes_;
    r.copy(io.in[0].sub(0, bytes), io.out.sub(0, bytes));
  }

 private:
  bool copy_ = false;
  uint64_t sample_bytes_ = 4;
};

}  // namespace

FRUGAL_VULKAN_KERNEL(Add, ElementwiseKernel);
FRUGAL_VULKAN_KERNEL(Sub, ElementwiseKernel);
FRUGAL_VULKAN_KERNEL(Mul, ElementwiseKernel);
FRUGAL_VULKAN_KERNEL(Div, ElementwiseKernel);
FRUGAL_VULKAN_KERNEL(Greater, ElementwiseKernel);
FRUGAL_VULKAN_KERNEL(GreaterOrEqual, ElementwiseKernel);
FRUGAL_VULKAN_KERNEL(Where, ElementwiseKernel);
FRUGAL_VULKAN_KERNEL(Cast, CastKernel);

}  // namespace frugal::vk
