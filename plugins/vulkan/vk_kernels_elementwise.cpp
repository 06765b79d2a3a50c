// Ops that map values one by one or move them: BatchNormalization / Relu /
// Clip / Sigmoid as layer heads (pointwise.comp), Add / Sub / Mul / Div with
// broadcasting (binary.comp), Flatten / Reshape / Identity / Dropout (a buffer
// copy: every layer output is its own region) and Concat (copy.comp per input),
// LRN (lrn.comp) and Softmax (softmax.comp).
#include <algorithm>

#include "frugal/model/ops/elementwise.h"
#include "frugal/model/ops/normalization.h"
#include "frugal/model/ops/shape_ops.h"
#include "frugal/plugin_sdk.hpp"
#include "vk_kernel.h"

namespace frugal::vk {

namespace {

// A 1-D shader over count(io) "outer" units of `sample_elems` values each,
// split so that input and output fit a binding.
class FlatKernel : public Kernel {
 protected:
  void create_flat(Device& d, const ShaderSet& shaders, const char* shader, SpecConstants sc) {
    sc.set(0, wg_).set(1, 1).set(2, 1);
    pipeline_ = d.pipeline(shaders.path(shader), sc);
  }
  // Records over samples: in/out regions advance by in_sample/out_sample bytes.
  void record_flat(Recorder& r, const LayerIO& io, uint64_t in_sample, uint64_t out_sample,
                   uint64_t invocations_per_sample, const std::string& label,
                   uint32_t rows_per_sample = 0) const {
    const int64_t n = count(io);
    const int64_t g = samples_per_dispatch(r, io, {in_sample, out_sample}, label);
    for (int64_t s0 = 0; s0 < n; s0 += g) {
      const int64_t k = std::min(g, n - s0);
      Bindings b;
      b.slot[kX] = io.in[0].sub(uint64_t(s0) * in_sample, uint64_t(k) * in_sample);
      b.slot[kO] = io.out.sub(uint64_t(s0) * out_sample, uint64_t(k) * out_sample);
      b.slot[kW] = io.weights;
      PushConstants pc;
      pc.n = uint32_t(k);
      pc.p0 = uint32_t(k) * rows_per_sample;
      r.bind(pipeline_, b, pc, label);
      r.dispatch_flat(uint64_t(k) * invocations_per_sample, wg_);
    }
  }
  uint32_t wg_ = 64;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
};

// ---- BatchNormalization / Relu / Clip / Sigmoid as the head of a layer ----------

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

// ---- Add, Sub, Mul, Div ----------------------------------------------------------

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

// ---- Flatten, Reshape, Identity, Dropout: the input copied --------------------------

class CopyKernel : public Kernel {
 public:
  explicit CopyKernel(const KernelSpec& s) : label_(s.label()) {
    require_activation(s, 0, "input");
    if (exec::is_passthrough(*s.op)) {
      Epilogue none;
      append_to_epilogue(s, none);  // checks Dropout's training mode
    } else if (dynamic_cast<const ops::Reshape*>(s.op)) {
      constant_ints(s, 1, "shape");  // the shape must be known when compiling
    }
    const Dims& d = s.inputs[0].dims;
    if (product(d) != product(s.output))
      fail(s, "input " + dims_string(d) + " and output " + dims_string(s.output) + " differ in size");
    declared_dim0_ = d.empty() ? 1 : d[0];
    sample_bytes_ = uint64_t(d.empty() ? 1 : product(d, 1)) * 4;
  }
  void pack(WeightPacker&) override {}
  void create_pipelines(Device&, const ShaderSet&) override {}
  void record(Recorder& r, const LayerIO& io) const override {
    const int64_t n = count(io);
    r.copy(io.in[0].sub(0, uint64_t(n) * sample_bytes_), io.out.sub(0, uint64_t(n) * sample_bytes_));
  }

 private:
  std::string label_;
  uint64_t sample_bytes_ = 4;
};

// ---- Concat: one block copy per input ----------------------------------------------

class ConcatKernel : public Kernel {
 public:
  explicit ConcatKernel(const KernelSpec& s) : label_(s.label()) {
    const Dims& out = s.output;
    const int64_t r = int64_t(out.size());
    const int64_t axis = normalize_axis(s, s.op_as<ops::Concat>().axis, r);
    declared_dim0_ = out[0];
    const int64_t out_block = product(out, size_t(axis));
    // Blocks of one sample: batched models concatenate on axis >= 1.
    outer_per_sample_ = axis == 0 ? 1 : product(out, 1, size_t(axis));
    int64_t offset = 0;
    for (size_t i = 0; i < s.inputs.size(); ++i) {
      const InputInfo& in = required_input(s, i, "input");
      Part part;
      if (in.constant) {
        part.constant = true;
        part.values = constant_floats(s, i, "input");
      } else {
        require_activation(s, i, "input");
      }
      if (int64_t(in.dims.size()) != r)
        fail(s, "input " + std::to_string(i) + " " + dims_string(in.dims) + " has the wrong rank");
      part.block = product(in.dims, size_t(axis));
      part.offset = offset;
      part.sample_elems = product(in.dims, 1);
      offset += part.block;
      parts_.push_back(std::move(part));
    }
    if (offset != out_block) fail(s, "inputs do not add up to the output " + dims_string(out));
    out_block_ = out_block;
    axis0_ = axis == 0;
    u32(product(out), s, "output size");
  }
  void pack(WeightPacker& p) override {
    wg_ = p.workgroup_1d;
    p.begin_block();
    for (Part& part : parts_)
      if (part.constant) {
        part.const_off = p.add_floats(part.values);
        part.elems = part.values.size();
        part.values = std::vector<float>();  // the device holds it now
      }
  }
  void create_pipelines(Device& d, const ShaderSet& shaders) override {
    for (Part& part : parts_) {
      SpecConstants sc;
      sc.set(0, wg_).set(1, 1).set(2, 1);
      sc.set(3, uint32_t(part.block)).set(4, uint32_t(out_block_)).set(5, uint32_t(part.offset));
      part.pipeline = d.pipeline(shaders.path("copy"), sc);
    }
  }
  void record(Recorder& r, const LayerIO& io) const override {
    const int64_t n = count(io);
    const uint64_t out_sample = uint64_t(outer_per_sample_ * out_block_) * 4;
    std::vector<uint64_t> sizes = {out_sample};
    for (const Part& part : parts_) sizes.push_back(part.constant ? 0 : uint64_t(part.sample_elems) * 4);
    const int64_t g = axis0_ ? n : samples_per_dispatch(r, io, sizes, label_);
    for (size_t i = 0; i < parts_.size(); ++i) {
      const Part& part = parts_[i];
      for (int64_t s0 = 0; s0 < n; s0 += g) {
        const int64_t k = axis0_ ? 1 : std::min(g, n - s0);
        Bindings b;
        if (part.constant)
          b.slot[kX] = io.weights.sub(uint64_t(part.const_off) * 4, uint64_t(part.elems) * 4);
        else if (axis0_)
          b.slot[kX] = io.in[i];
        else
          b.slot[kX] =
              io.in[i].sub(uint64_t(s0 * part.sample_elems) * 4, uint64_t(k * part.sample_elems) * 4);
        b.slot[kO] = axis0_ ? io.out : io.out.sub(uint64_t(s0) * out_sample, uint64_t(k) * out_sample);
        PushConstants pc;
        pc.n = uint32_t(axis0_ ? 1 : k * outer_per_sample_);
        r.bind(part.pipeline, b, pc, label_);
        r.dispatch_flat(uint64_t(pc.n) * uint64_t(part.block), wg_);
        if (axis0_) break;
      }
    }
  }

 private:
  struct Part {
    bool constant = false;
    std::vector<float> values;  // until packed
    size_t elems = 0;
    uint32_t const_off = 0;
    int64_t block = 0, offset = 0, sample_elems = 0;
    VkPipeline pipeline = VK_NULL_HANDLE;
  };
  std::string label_;
  std::vector<Part> parts_;
  int64_t outer_per_sample_ = 1, out_block_ = 0;
  bool axis0_ = false;
  uint32_t wg_ = 64;
};

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

FRUGAL_VULKAN_ACTIVATIONS(PointwiseKernel);
FRUGAL_VULKAN_KERNEL(BatchNormalization, PointwiseKernel);
FRUGAL_VULKAN_KERNEL(Add, BinaryKernel);
FRUGAL_VULKAN_KERNEL(Sub, BinaryKernel);
FRUGAL_VULKAN_KERNEL(Mul, BinaryKernel);
FRUGAL_VULKAN_KERNEL(Div, BinaryKernel);
FRUGAL_VULKAN_KERNEL(Identity, CopyKernel);
FRUGAL_VULKAN_KERNEL(Dropout, CopyKernel);
FRUGAL_VULKAN_KERNEL(Flatten, CopyKernel);
FRUGAL_VULKAN_KERNEL(Reshape, CopyKernel);
FRUGAL_VULKAN_KERNEL(Concat, ConcatKernel);
FRUGAL_VULKAN_KERNEL(LRN, LrnKernel);
FRUGAL_VULKAN_KERNEL(Softmax, SoftmaxKernel);

}  // namespace frugal::vk
