// Ops that only move data: Flatten, Reshape (copies into the output: every layer
// output is its own arena chunk) and Concat (any axis, constant parts allowed).
#include <cstring>

#include "kernels/kernel_util.h"

namespace frugal::cpu {

namespace {

class FlattenKernel : public Kernel {
 public:
  explicit FlattenKernel(const KernelSpec& s) : label_(s.label()) {
    require_float_activation(s, 0, "input");
    axis_ = s.node->attr_int("axis", 1);
    const int64_t r = int64_t(s.inputs[0].dims.size());
    if (axis_ < -r || axis_ > r)
      fail(s, "axis " + std::to_string(axis_) + " is out of range for rank " + std::to_string(r));
  }
  Dims infer(const std::vector<Dims>& in) const override {
    const int64_t r = int64_t(in[0].size()), axis = axis_ < 0 ? axis_ + r : axis_;
    if (axis < 0 || axis > r) throw Error(label_ + ": axis out of range for " + dims_string(in[0]));
    return {product(in[0], 0, size_t(axis)), product(in[0], size_t(axis))};
  }
  void run(const KernelArgs& a) const override {
    std::memcpy(a.out, a.in[0], sizeof(float) * size_t(product(a.in_dims[0])));
  }

 private:
  std::string label_;
  int64_t axis_ = 1;
};

class ReshapeKernel : public Kernel {
 public:
  explicit ReshapeKernel(const KernelSpec& s) : label_(s.label()) {
    require_float_activation(s, 0, "data");
    shape_ = constant_ints(s, 1, "shape");
    allow_zero_ = s.node->attr_int("allowzero", 0) != 0;
    int minus = 0;
    for (int64_t v : shape_) {
      if (v == -1)
        ++minus;
      else if (v < 0)
        fail(s, "shape " + dims_string(shape_) + " has a negative entry other than -1");
    }
    if (minus > 1) fail(s, "shape " + dims_string(shape_) + " has more than one -1");
  }
  Dims infer(const std::vector<Dims>& in) const override {
    const Dims& x = in[0];
    Dims out = shape_;
    int64_t known = 1, unknown = -1;
    for (size_t i = 0; i < out.size(); ++i) {
      if (out[i] == 0 && !allow_zero_) {
        if (i >= x.size())
          throw Error(label_ + ": shape " + dims_string(shape_) + " copies dim " + std::to_string(i) +
                      " of " + dims_string(x));
        out[i] = x[i];
      }
      if (out[i] == -1)
        unknown = int64_t(i);
      else
        known *= out[i];
    }
    const int64_t total = product(x);
    if (unknown >= 0) {
      if (known == 0 || total % known != 0)
        throw Error(label_ + ": cannot reshape " + dims_string(x) + " to " + dims_string(shape_));
      out[size_t(unknown)] = total / known;
    } else if (known != total) {
      throw Error(label_ + ": cannot reshape " + dims_string(x) + " (" + std::to_string(total) +
                  " values) to " + dims_string(shape_));
    }
    return out;
  }
  void run(const KernelArgs& a) const override {
    std::memcpy(a.out, a.in[0], sizeof(float) * size_t(product(a.in_dims[0])));
  }

 private:
  std::string label_;
  Dims shape_;
  bool allow_zero_ = false;
};

class ConcatKernel : public Kernel {
 public:
  explicit ConcatKernel(const KernelSpec& s) : label_(s.label()) {
    if (!s.node->has_attr("axis")) fail(s, "attribute axis is required");
    axis_ = s.node->attr_int("axis", 0);
    if (s.inputs.empty()) fail(s, "needs at least one input");
    constants_.resize(s.inputs.size());
    is_constant_.resize(s.inputs.size(), false);
    for (size_t i = 0; i < s.inputs.size(); ++i) {
      const InputInfo& in = required_input(s, i, "input");
      if (in.constant) {
        constants_[i] = constant_floats(s, i, "input");
        is_constant_[i] = true;
      } else {
        require_float_activation(s, i, "input");
      }
    }
  }
  Dims infer(const std::vector<Dims>& in) const override {
    const int64_t r = int64_t(in[0].size());
    const int64_t axis = axis_ < 0 ? axis_ + r : axis_;
    if (axis < 0 || axis >= r)
      throw Error(label_ + ": axis " + std::to_string(axis_) + " is out of range for rank " +
                  std::to_string(r));
    Dims out = in[0];
    for (size_t i = 1; i < in.size(); ++i) {
      bool ok = int64_t(in[i].size()) == r;
      for (int64_t k = 0; ok && k < r; ++k) ok = k == axis || in[i][size_t(k)] == out[size_t(k)];
      if (!ok)
        throw Error(label_ + ": input " + std::to_string(i) + " " + dims_string(in[i]) + " does not match " +
                    dims_string(in[0]) + " outside axis " + std::to_string(axis));
      out[size_t(axis)] += in[i][size_t(axis)];
    }
    return out;
  }
  void run(const KernelArgs& a) const override {
    const Dims& out = a.out_dims;
    const int64_t r = int64_t(out.size()), axis = axis_ < 0 ? axis_ + r : axis_;
    const int64_t outer = product(out, 0, size_t(axis)), out_block = product(out, size_t(axis));
    int64_t offset = 0;
    for (size_t i = 0; i < a.in_dims.size(); ++i) {
      const int64_t block = product(a.in_dims[i], size_t(axis));
      const float* src = is_constant_[i] ? constants_[i].data() : a.in[i];
      if (block == 0) continue;  // an empty part: nothing to copy (and maybe no buffer)
      parallel_range(a.pool, outer, std::max<int64_t>(1, 65536 / block), [&](int64_t o0, int64_t o1) {
        for (int64_t o = o0; o < o1; ++o)
          std::memcpy(a.out + o * out_block + offset, src + o * block, sizeof(float) * size_t(block));
      });
      offset += block;
    }
  }

 private:
  std::string label_;
  int64_t axis_ = 0;
  std::vector<std::vector<float>> constants_;
  std::vector<bool> is_constant_;
};

}  // namespace

std::unique_ptr<Kernel> make_shape_op(const KernelSpec& s) {
  const std::string& t = s.node->op_type;
  if (t == "Flatten") return std::make_unique<FlattenKernel>(s);
  if (t == "Reshape") return std::make_unique<ReshapeKernel>(s);
  return std::make_unique<ConcatKernel>(s);
}

}  // namespace frugal::cpu
