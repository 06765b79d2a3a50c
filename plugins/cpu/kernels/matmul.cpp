// Gemm (Y = alpha * A' B' + beta * C, C broadcast to [M, N]) and MatMul (numpy
// semantics: 1-D promotion, broadcast batch dims) through cblas_sgemm; a Gemm
// with a constant B, A not transposed and no C left over on the packed 1x1
// kernel's weights instead (Conv1x1::run_rows, kernels/conv_1x1.h).
// A Gemm bias that is one value per column becomes the first epilogue step, so a
// BatchNormalization bundled after it folds into the same per-column affine map.
#include "frugal/model/ops/matmul.h"

#include <algorithm>
#include <cstring>
#include <memory>

#include "kernels/conv_1x1.h"
#include "kernels/kernel_util.h"
#include "kernels/parallel_gemm.h"

namespace frugal::cpu {

namespace {

// An input that is either constant (held here) or an activation (given per call).
struct Operand {
  bool constant = false;
  std::vector<float> values;
  const float* get(const KernelArgs& a, size_t i) const { return constant ? values.data() : a.in[i]; }
};

Operand operand(const KernelSpec& s, size_t i, const char* role) {
  Operand o;
  const InputInfo& in = required_input(s, i, role);
  if (in.constant) {
    o.constant = true;
    o.values = constant_floats(s, i, role);
  } else {
    require_float_activation(s, i, role);
  }
  return o;
}

class GemmKernel : public Kernel {
 public:
  explicit GemmKernel(const KernelSpec& s) {
    const ops::Gemm& op = s.op_as<ops::Gemm>();
    a_ = operand(s, 0, "input A");
    required_input(s, 1, "input B");
    trans_a_ = op.trans_a;
    trans_b_ = op.trans_b;
    alpha_ = op.alpha;
    beta_ = op.beta;
    has_c_ = has_input(s, 2);
    if (has_c_) {
      c_ = operand(s, 2, "input C");
      c_dims_ = s.inputs[2].dims;
    }
    // A constant bias of one value per column (shape [N] or [1, N]) is an epilogue shift.
    const int64_t N = s.output[1];
    n_ = N;
    k_ = trans_b_ ? s.inputs[1].dims[1] : s.inputs[1].dims[0];
    if (has_c_ && c_.constant && product(c_dims_) == N && !c_dims_.empty() && c_dims_.back() == N &&
        c_dims_.size() <= 2) {
      std::vector<float> shift(static_cast<size_t>(N));
      for (int64_t j = 0; j < N; ++j) shift[size_t(j)] = beta_ * c_.values[size_t(j)];
      epilogue_.add_affine(std::vector<float>(size_t(N), 1.0f), shift);
      has_c_ = false;
    }
    if (!pack_b(s)) b_ = operand(s, 1, "input B");
  }

  Epilogue* epilogue() override { return &epilogue_; }

  // The packed path's epilogue, complete now that the bundled nodes are known.
  void prepare() override {
    if (packed_) packed_->set_epilogue(epilogue_);
  }
  uint64_t packed_weight_bytes() const override { return packed_ ? packed_->weight_bytes() : 0; }
  std::string algorithm() const override {
    if (!packed_) return "sgemm";
    return packed_isa() == PackedIsa::Avx512 ? "packed avx512 (features in the lanes, epilogue in registers)"
                                             : "packed avx2 (features in the lanes, epilogue in registers)";
  }

  void run(const KernelArgs& a) const override {
    if (packed_) {
      const int64_t M = a.out_dims[0], N = a.out_dims[1], K = a.in_dims[0][1];
      const float* A = a.in[0];
      const int64_t blocks = packed_->blocks();
      int parts = a.pool ? a.pool->size() : 1;
      if (2.0 * double(M) * double(N) * double(K) < 2e6) parts = 1;  // too small to share
      parts = int(std::min<int64_t>(parts, blocks));
      if (parts <= 1) {
        packed_->run_rows(A, K, M, a.out, N, 0, blocks);
        return;
      }
      a.pool->parallel_for(parts, [&](int64_t p, int) {
        packed_->run_rows(A, K, M, a.out, N, blocks * p / parts, blocks * (p + 1) / parts);
      });
      return;
    }
    const Dims& ad = a.in_dims[0];
    const int64_t M = a.out_dims[0], N = a.out_dims[1], K = trans_a_ ? ad[0] : ad[1];
    float beta = 0.0f;
    if (has_c_) {  // Y = beta * C (broadcast), then Y += alpha A B
      const Dims& cd = a.in_dims[2];
      const float* c = c_.get(a, 2);
      const int64_t cr = cd.size() == 2 ? cd[0] : 1, cc = cd.empty() ? 1 : cd.back();
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j)
          a.out[i * N + j] = beta_ * c[(cr == 1 ? 0 : i) * cc + (cc == 1 ? 0 : j)];
      beta = 1.0f;
    }
    parallel_sgemm(trans_a_, trans_b_, M, N, K, alpha_, a_.get(a, 0), trans_a_ ? M : K, b_.get(a, 1),
                   trans_b_ ? K : N, beta, a.out, N, a.pool);
    epilogue_.apply_rows(a.out, M, N);
  }

 private:
  // A constant B without a C left over (a bias folds into the epilogue) and A
  // not transposed: the weights packed for Conv1x1::run_rows straight from the
  // graph's bytes (float32; others converted first), alpha folded into them, so
  // that no float copy of B exists beside the graph's and the packed one.
  bool pack_b(const KernelSpec& s) {
    const InputInfo& b = s.inputs[1];
    if (trans_a_ || has_c_ || !b.constant || packed_isa() == PackedIsa::None) return false;
    std::vector<float> converted;
    if (b.value->dtype != DType::Float32) converted = constant_floats(s, 1, "input B");
    const float* w = converted.empty() ? b.value->f32() : converted.data();
    // B is [K, N], or [N, K] when transposed: packed row n is B's column n, or its row n.
    packed_ = trans_b_ ? std::make_unique<Conv1x1>(n_, k_, w, k_, 1, alpha_, packed_isa())
                       : std::make_unique<Conv1x1>(n_, k_, w, 1, n_, alpha_, packed_isa());
    return true;
  }

  Operand a_, b_, c_;
  Dims c_dims_;
  bool trans_a_ = false, trans_b_ = false, has_c_ = false;
  float alpha_ = 1.0f, beta_ = 1.0f;
  int64_t n_ = 0, k_ = 0;  // B's output features and inner size
  Epilogue epilogue_;
  std::unique_ptr<Conv1x1> packed_;  // the packed path (pack_b); its epilogue set by prepare()
};

class MatMulKernel : public Kernel {
 public:
  explicit MatMulKernel(const KernelSpec& s) {
    a_ = operand(s, 0, "input A");
    b_ = operand(s, 1, "input B");
  }

  void run(const KernelArgs& args) const override {
    const Shape s = shape(args.in_dims[0], args.in_dims[1]);
    const float* A = a_.get(args, 0);
    const float* B = b_.get(args, 1);
    const size_t nb = s.batch.size();
    if (s.b_batch_free) {  // one sgemm: the batch dims of A fold into M
      const int64_t rows = product(s.batch) * s.M;
      parallel_sgemm(false, false, rows, s.N, s.K, 1.0f, A, s.K, B, s.N, 0.0f, args.out, s.N, args.pool);
      return;
    }
    const int64_t count = product(s.batch);
    for (int64_t idx = 0; idx < count; ++idx) {
      int64_t oa = 0, ob = 0, rem = idx;
      for (size_t k = nb; k-- > 0;) {
        const int64_t i = rem % s.batch[k];
        rem /= s.batch[k];
        oa += (s.a_batch[k] == 1 ? 0 : i) * s.a_stride[k];
        ob += (s.b_batch[k] == 1 ? 0 : i) * s.b_stride[k];
      }
      parallel_sgemm(false, false, s.M, s.N, s.K, 1.0f, A + oa * s.M * s.K, s.K, B + ob * s.K * s.N, s.N,
                     0.0f, args.out + idx * s.M * s.N, s.N, args.pool);
    }
  }

 private:
  // The product's geometry at these input dims (ops::MatMulShape), and whether
  // B is one matrix shared by every batch index with A unbroadcast: then the
  // batch dims of A fold into M and one sgemm does it all.
  struct Shape : ops::MatMulShape {
    bool b_batch_free = false;
  };
  static Shape shape(const Dims& a, const Dims& b) {
    ValueShape va, vb;
    va.dims = a;
    vb.dims = b;
    Shape s;
    static_cast<ops::MatMulShape&>(s) = ops::MatMulShape::of(va, vb);
    s.b_batch_free = product(s.b_batch) == 1 && s.a_batch == s.batch;
    return s;
  }

  Operand a_, b_;
};

}  // namespace

FRUGAL_CPU_KERNEL(Gemm, GemmKernel);
FRUGAL_CPU_KERNEL(MatMul, MatMulKernel);

}  // namespace frugal::cpu
