// Add, Sub, Mul, Div, Greater, GreaterOrEqual (bool results as 0 / 1) and
// Where (condition, X, Y) with numpy broadcasting. Dimensions are coalesced
// first, so the common cases (same shape, per-channel [C,1,1] operand, scalar)
// run as long contiguous inner loops, cut into pieces for the threads. An Add
// takes the activations after it as its epilogue (a residual Add + Relu is one
// pass over memory), applied to each piece while it is in cache.
#include <algorithm>
#include <array>

#include "common/elementwise_fn.h"
#include "kernels/kernel_util.h"

namespace frugal::cpu {

using exec::ElementwiseFn;

namespace {

template <ElementwiseFn f>
inline float apply(float a, float b, float c) {
  if constexpr (f == ElementwiseFn::Add) return a + b;
  if constexpr (f == ElementwiseFn::Sub) return a - b;
  if constexpr (f == ElementwiseFn::Mul) return a * b;
  if constexpr (f == ElementwiseFn::Div) return a / b;
  if constexpr (f == ElementwiseFn::Greater) return a > b ? 1.0f : 0.0f;
  if constexpr (f == ElementwiseFn::GreaterOrEqual) return a >= b ? 1.0f : 0.0f;
  return a != 0.0f ? b : c;  // Where
}

// Inner loop over `len` outputs; each operand's stride is 0 or 1. The two-operand
// cases get loops of their own so that the compiler vectorises them.
template <ElementwiseFn f>
void inner(const std::array<const float*, 3>& p, const std::array<int64_t, 3>& s, float* y, int64_t len) {
  const float *a = p[0], *b = p[1], *c = p[2];
  if constexpr (f == ElementwiseFn::Where) {
    for (int64_t i = 0; i < len; ++i) y[i] = apply<f>(a[i * s[0]], b[i * s[1]], c[i * s[2]]);
  } else if (s[0] == 1 && s[1] == 1) {
    for (int64_t i = 0; i < len; ++i) y[i] = apply<f>(a[i], b[i], 0.0f);
  } else if (s[0] == 1) {
    for (int64_t i = 0; i < len; ++i) y[i] = apply<f>(a[i], b[0], 0.0f);
  } else if (s[1] == 1) {
    for (int64_t i = 0; i < len; ++i) y[i] = apply<f>(a[0], b[i], 0.0f);
  } else {
    for (int64_t i = 0; i < len; ++i) y[i] = apply<f>(a[0], b[0], 0.0f);
  }
}

// Output dims with size-1 dims dropped and neighbours that are contiguous in
// every operand merged; per operand its element stride on each (0: broadcast).
struct Coalesced {
  Dims dims;
  std::array<std::vector<int64_t>, 3> strides;
};

Coalesced coalesce(const Dims& out, const std::vector<Dims>& in) {
  const size_t r = out.size(), n = in.size();
  std::array<std::vector<int64_t>, 3> st;
  for (size_t i = 0; i < n; ++i) {
    st[i].assign(r, 0);
    int64_t acc = 1;
    for (size_t k = r; k-- > 0;) {
      const int64_t dim = k + in[i].size() >= r ? in[i][k + in[i].size() - r] : 1;
      st[i][k] = dim == 1 ? 0 : acc;
      acc *= dim;
    }
  }
  Coalesced c;
  for (size_t k = 0; k < r; ++k) {
    if (out[k] == 1) continue;
    bool merge = !c.dims.empty();
    for (size_t i = 0; merge && i < n; ++i) merge = c.strides[i].back() == st[i][k] * out[k];
    if (merge) {
      c.dims.back() *= out[k];
      for (size_t i = 0; i < n; ++i) c.strides[i].back() = st[i][k];
      continue;
    }
    c.dims.push_back(out[k]);
    for (size_t i = 0; i < n; ++i) c.strides[i].push_back(st[i][k]);
  }
  return c;
}

class ElementwiseKernel : public Kernel {
 public:
  explicit ElementwiseKernel(const KernelSpec& s) : fn_(exec::elementwise_fn(s)) {
    static const char* roles[2][3] = {{"input A", "input B", ""}, {"condition", "input X", "input Y"}};
    const bool where = fn_ == ElementwiseFn::Where;
    for (size_t i = 0; i < exec::operand_count(fn_); ++i) {
      const char* role = roles[where][i];
      const InputInfo& in = required_input(s, i, role);
      exec::require_operand(s, i, role, where && i == 0);
      if (in.constant) constant_[i] = exec::constant_values(s, i, role);
      is_constant_[i] = in.constant;
    }
    takes_epilogue_ = fn_ == ElementwiseFn::Add && s.output.size() >= 2;
  }

  // Only an Add whose output has channels (rank >= 2) takes an epilogue.
  Epilogue* epilogue() override { return takes_epilogue_ ? &epilogue_ : nullptr; }

  void run(const KernelArgs& a) const override {
    switch (fn_) {
      case ElementwiseFn::Add:
        return run_fn<ElementwiseFn::Add>(a);
      case ElementwiseFn::Sub:
        return run_fn<ElementwiseFn::Sub>(a);
      case ElementwiseFn::Mul:
        return run_fn<ElementwiseFn::Mul>(a);
      case ElementwiseFn::Div:
        return run_fn<ElementwiseFn::Div>(a);
      case ElementwiseFn::Greater:
        return run_fn<ElementwiseFn::Greater>(a);
      case ElementwiseFn::GreaterOrEqual:
        return run_fn<ElementwiseFn::GreaterOrEqual>(a);
      case ElementwiseFn::Where:
        return run_fn<ElementwiseFn::Where>(a);
      case ElementwiseFn::NonZero:
        break;
    }
  }

 private:
  template <ElementwiseFn f>
  void run_fn(const KernelArgs& args) const {
    const size_t n = exec::operand_count(f);
    std::array<const float*, 3> p{nullptr, nullptr, nullptr};
    for (size_t i = 0; i < n; ++i) p[i] = is_constant_[i] ? constant_[i].data() : args.in[i];
    const Coalesced c =
        coalesce(args.out_dims, std::vector<Dims>(args.in_dims.begin(), args.in_dims.begin() + n));
    if (c.dims.empty()) {  // a single element
      args.out[0] = apply<f>(p[0][0], p[1][0], n > 2 ? p[2][0] : 0.0f);
      return;
    }
    const size_t q = c.dims.size();
    const int64_t len = c.dims[q - 1];
    std::array<int64_t, 3> last{0, 0, 0};
    for (size_t i = 0; i < n; ++i) last[i] = c.strides[i][q - 1];
    const int64_t rows = product(c.dims, 0, q - 1);
    // Long rows (same-shape operands coalesce to one row) are cut into pieces
    // of kPiece values so that every thread takes some and each stays in L1/L2.
    constexpr int64_t kPiece = 8192;
    const int64_t pieces = (len + kPiece - 1) / kPiece;
    parallel_range(args.pool, rows * pieces, std::max<int64_t>(1, 32768 / std::min(len, kPiece)),
                   [&](int64_t j0, int64_t j1) {
                     for (int64_t j = j0; j < j1; ++j) {
                       const int64_t row = j / pieces, first = (j % pieces) * kPiece;
                       std::array<const float*, 3> at = p;
                       int64_t rem = row;
                       for (size_t k = q - 1; k-- > 0;) {
                         const int64_t idx = rem % c.dims[k];
                         rem /= c.dims[k];
                         for (size_t i = 0; i < n; ++i) at[i] += idx * c.strides[i][k];
                       }
                       for (size_t i = 0; i < n; ++i) at[i] += first * last[i];
                       const int64_t count = std::min(kPiece, len - first);
                       float* y = args.out + row * len + first;
                       inner<f>(at, last, y, count);
                       if (!epilogue_.empty()) apply_epilogue(args.out_dims, y - args.out, y, count);
                     }
                   });
  }

  // The epilogue on outputs [offset, offset + count) of the whole output, channel by channel.
  void apply_epilogue(const Dims& out, int64_t offset, float* y, int64_t count) const {
    const int64_t inner_size = product(out, 2, out.size()), channels = out[1];
    while (count > 0) {
      const int64_t plane = offset / inner_size, run = std::min(count, (plane + 1) * inner_size - offset);
      epilogue_.apply(y, plane % channels, run);
      y += run;
      offset += run;
      count -= run;
    }
  }

  ElementwiseFn fn_;
  bool takes_epilogue_ = false;
  Epilogue epilogue_;
  bool is_constant_[3] = {false, false, false};
  std::vector<float> constant_[3];
};

}  // namespace

FRUGAL_CPU_KERNEL(Add, ElementwiseKernel);
FRUGAL_CPU_KERNEL(Sub, ElementwiseKernel);
FRUGAL_CPU_KERNEL(Mul, ElementwiseKernel);
FRUGAL_CPU_KERNEL(Div, ElementwiseKernel);
FRUGAL_CPU_KERNEL(Greater, ElementwiseKernel);
FRUGAL_CPU_KERNEL(GreaterOrEqual, ElementwiseKernel);
FRUGAL_CPU_KERNEL(Where, ElementwiseKernel);

}  // namespace frugal::cpu
