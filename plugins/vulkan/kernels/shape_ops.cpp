// Ops that only move data: Flatten, Reshape, Identity, Dropout (a buffer copy:
// every layer output is its own region) and Concat (copy.comp per input).
#include "frugal/model/ops/shape_ops.h"

#include <algorithm>

#include "vk_kernel.h"

namespace frugal::vk {

namespace {

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

}  // namespace

FRUGAL_VULKAN_KERNEL(Identity, CopyKernel);
FRUGAL_VULKAN_KERNEL(Dropout, CopyKernel);
FRUGAL_VULKAN_KERNEL(Flatten, CopyKernel);
FRUGAL_VULKAN_KERNEL(Reshape, CopyKernel);
FRUGAL_VULKAN_KERNEL(Concat, ConcatKernel);

}  // namespace frugal::vk
