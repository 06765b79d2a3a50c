// Add, Sub, Mul, Div with numpy broadcasting. Dimensions are coalesced first,
// so the common cases (same shape, per-channel [C,1,1] operand, scalar) run as
// long contiguous inner loops.
#include "frugal/model/ops/elementwise.h"

#include <algorithm>

#include "kernels/kernel_util.h"

namespace frugal::cpu {

namespace {

enum class BinOp { Add, Sub, Mul, Div };  // as ops::Arithmetic::Fn

template <BinOp op>
inline float apply(float a, float b) {
  if constexpr (op == BinOp::Add) return a + b;
  if constexpr (op == BinOp::Sub) return a - b;
  if constexpr (op == BinOp::Mul) return a * b;
  return a / b;
}

// Inner loop over `len` outputs; the strides of a and b are 0 or 1.
template <BinOp op>
void inner(const float* a, int64_t sa, const float* b, int64_t sb, float* y, int64_t len) {
  if (sa == 1 && sb == 1)
    for (int64_t i = 0; i < len; ++i) y[i] = apply<op>(a[i], b[i]);
  else if (sa == 1)
    for (int64_t i = 0; i < len; ++i) y[i] = apply<op>(a[i], b[0]);
  else if (sb == 1)
    for (int64_t i = 0; i < len; ++i) y[i] = apply<op>(a[0], b[i]);
  else
    for (int64_t i = 0; i < len; ++i) y[i] = apply<op>(a[0], b[0]);
}

class BinaryKernel : public Kernel {
 public:
  explicit BinaryKernel(const KernelSpec& s) : label_(s.label()) {
    op_ = BinOp(int(s.op_as<ops::Arithmetic>().fn));
    for (size_t i = 0; i < 2; ++i) {
      const InputInfo& in = required_input(s, i, i == 0 ? "input A" : "input B");
      if (in.constant) {
        constant_[i] = constant_floats(s, i, i == 0 ? "input A" : "input B");
        is_constant_[i] = true;
      } else {
        require_float_activation(s, i, i == 0 ? "input A" : "input B");
      }
    }
  }

  void run(const KernelArgs& a) const override {
    switch (op_) {
      case BinOp::Add:
        run_op<BinOp::Add>(a);
        break;
      case BinOp::Sub:
        run_op<BinOp::Sub>(a);
        break;
      case BinOp::Mul:
        run_op<BinOp::Mul>(a);
        break;
      case BinOp::Div:
        run_op<BinOp::Div>(a);
        break;
    }
  }

 private:
  template <BinOp op>
  void run_op(const KernelArgs& args) const {
    const float* pa = is_constant_[0] ? constant_[0].data() : args.in[0];
    const float* pb = is_constant_[1] ? constant_[1].data() : args.in[1];
    const Dims& out = args.out_dims;
    const size_t r = out.size();
    // Strides of a and b over the output's dims (0 where broadcast), then drop
    // size-1 dims and merge neighbours that are contiguous in both operands.
    std::vector<int64_t> sa(r), sb(r);
    auto strides = [&](const Dims& d, std::vector<int64_t>& st) {
      int64_t acc = 1;
      for (size_t k = r; k-- > 0;) {
        const int64_t dim = k + d.size() >= r ? d[k + d.size() - r] : 1;
        st[k] = dim == 1 ? 0 : acc;
        acc *= dim;
      }
    };
    strides(args.in_dims[0], sa);
    strides(args.in_dims[1], sb);
    std::vector<int64_t> D, A, B;  // coalesced dims and strides, outermost first
    for (size_t k = 0; k < r; ++k) {
      if (out[k] == 1) continue;
      if (!D.empty() && A.back() == sa[k] * out[k] && B.back() == sb[k] * out[k]) {
        D.back() *= out[k];
        A.back() = sa[k];
        B.back() = sb[k];
        continue;
      }
      D.push_back(out[k]);
      A.push_back(sa[k]);
      B.push_back(sb[k]);
    }
    if (D.empty()) {  // a single element
      args.out[0] = apply<op>(pa[0], pb[0]);
      return;
    }
    const size_t q = D.size();
    const int64_t len = D[q - 1], la = A[q - 1], lb = B[q - 1];
    const int64_t rows = product(D, 0, q - 1);
    parallel_range(args.pool, rows, std::max<int64_t>(1, 32768 / len), [&](int64_t r0, int64_t r1) {
      for (int64_t row = r0; row < r1; ++row) {
        int64_t oa = 0, ob = 0, rem = row;
        for (size_t k = q - 1; k-- > 0;) {
          const int64_t idx = rem % D[k];
          rem /= D[k];
          oa += idx * A[k];
          ob += idx * B[k];
        }
        inner<op>(pa + oa, la, pb + ob, lb, args.out + row * len, len);
      }
    });
  }

  std::string label_;
  BinOp op_ = BinOp::Add;
  bool is_constant_[2] = {false, false};
  std::vector<float> constant_[2];
};

}  // namespace

FRUGAL_CPU_KERNEL(Add, BinaryKernel);
FRUGAL_CPU_KERNEL(Sub, BinaryKernel);
FRUGAL_CPU_KERNEL(Mul, BinaryKernel);
FRUGAL_CPU_KERNEL(Div, BinaryKernel);

}  // namespace frugal::cpu
