// Ops that only move data: Flatten, Reshape (copies into the output: every layer
// output is its own arena chunk) and Concat (any axis, constant parts allowed).
#include "frugal/model/ops/shape_ops.h"

#include <cstring>

#include "kernels/kernel_util.h"

namespace frugal::cpu {

namespace {

// Flatten and Reshape: the values copied (the op's shape function gave the dims).
class CopyKernel : public Kernel {
 public:
  explicit CopyKernel(const KernelSpec& s) {
    require_float_activation(s, 0, "data");
    if (dynamic_cast<const ops::Reshape*>(s.op)) constant_ints(s, 1, "shape");  // known when compiling
  }
  void run(const KernelArgs& a) const override {
    std::memcpy(a.out, a.in[0], sizeof(float) * size_t(product(a.in_dims[0])));
  }
};

class ConcatKernel : public Kernel {
 public:
  explicit ConcatKernel(const KernelSpec& s) : axis_(s.op_as<ops::Concat>().axis) {
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
  int64_t axis_ = 0;
  std::vector<std::vector<float>> constants_;
  std::vector<bool> is_constant_;
};

}  // namespace

FRUGAL_CPU_KERNEL(Flatten, CopyKernel);
FRUGAL_CPU_KERNEL(Reshape, CopyKernel);
FRUGAL_CPU_KERNEL(Concat, ConcatKernel);

}  // namespace frugal::cpu
