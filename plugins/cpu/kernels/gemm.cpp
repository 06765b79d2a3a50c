// Gemm (Y = alpha * A' B' + beta * C, C broadcast to [M, N]) and MatMul (numpy
// semantics: 1-D promotion, broadcast batch dims), both through cblas_sgemm.
// A Gemm bias that is one value per column becomes the first epilogue step, so a
// BatchNormalization bundled after it folds into the same per-column affine map.
#include <algorithm>
#include <cstring>

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
  explicit GemmKernel(const KernelSpec& s) : label_(s.label()) {
    const Node& n = *s.node;
    a_ = operand(s, 0, "input A");
    b_ = operand(s, 1, "input B");
    trans_a_ = n.attr_int("transA", 0) != 0;
    trans_b_ = n.attr_int("transB", 0) != 0;
    alpha_ = n.attr_float("alpha", 1.0f);
    beta_ = n.attr_float("beta", 1.0f);
    has_c_ = has_input(s, 2);
    if (has_c_) {
      c_ = operand(s, 2, "input C");
      c_dims_ = s.inputs[2].dims;
    }
    const Dims out = infer_dims(s.inputs[0].dims, s.inputs[1].dims, label_);
    // A constant bias of one value per column (shape [N] or [1, N]) is an epilogue shift.
    const int64_t N = out[1];
    if (has_c_ && c_.constant && product(c_dims_) == N && !c_dims_.empty() && c_dims_.back() == N &&
        c_dims_.size() <= 2) {
      std::vector<float> shift(static_cast<size_t>(N));
      for (int64_t j = 0; j < N; ++j) shift[size_t(j)] = beta_ * c_.values[size_t(j)];
      epilogue_.add_affine(std::vector<float>(size_t(N), 1.0f), shift);
      has_c_ = false;
    }
  }

  Dims infer(const std::vector<Dims>& in) const override {
    Dims out = infer_dims(in[0], in[1], label_);
    if (has_c_) {
      const Dims& c = in[2];
      if (c.size() > 2) throw Error(label_ + ": C " + dims_string(c) + " has rank > 2");
      for (size_t k = 0; k < c.size(); ++k) {
        const int64_t od = out[2 - c.size() + k];
        if (c[k] != 1 && c[k] != od)
          throw Error(label_ + ": C " + dims_string(c) + " does not broadcast to " + dims_string(out));
      }
    }
    return out;
  }

  int64_t macs(const std::vector<Dims>& in) const override {
    const Dims out = infer_dims(in[0], in[1], label_);
    const int64_t K = trans_a_ ? in[0][0] : in[0][1];
    return out[0] * out[1] * K;
  }

  Epilogue* epilogue() override { return &epilogue_; }

  void run(const KernelArgs& a) const override {
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
  Dims infer_dims(const Dims& a, const Dims& b, const std::string& label) const {
    if (a.size() != 2 || b.size() != 2)
      throw Error(label + ": A " + dims_string(a) + " and B " + dims_string(b) + " must both have rank 2");
    const int64_t M = trans_a_ ? a[1] : a[0], Ka = trans_a_ ? a[0] : a[1];
    const int64_t Kb = trans_b_ ? b[1] : b[0], N = trans_b_ ? b[0] : b[1];
    if (Ka != Kb)
      throw Error(label + ": A " + dims_string(a) + (trans_a_ ? " (transposed)" : "") + " and B " +
                  dims_string(b) + (trans_b_ ? " (transposed)" : "") + " disagree on K");
    return {M, N};
  }

  std::string label_;
  Operand a_, b_, c_;
  Dims c_dims_;
  bool trans_a_ = false, trans_b_ = false, has_c_ = false;
  float alpha_ = 1.0f, beta_ = 1.0f;
  Epilogue epilogue_;
};

class MatMulKernel : public Kernel {
 public:
  explicit MatMulKernel(const KernelSpec& s) : label_(s.label()) {
    a_ = operand(s, 0, "input A");
    b_ = operand(s, 1, "input B");
  }

  Dims infer(const std::vector<Dims>& in) const override { return shape(in[0], in[1]).out; }

  int64_t macs(const std::vector<Dims>& in) const override {
    const Shape s = shape(in[0], in[1]);
    return product(s.batch) * s.M * s.N * s.K;
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
  struct Shape {
    int64_t M = 1, N = 1, K = 1;
    Dims batch, a_batch, b_batch;             // broadcast batch dims, and each operand's (padded with 1)
    std::vector<int64_t> a_stride, b_stride;  // in matrices
    bool b_batch_free = false;                // B is one matrix shared by every batch index, A unbroadcast
    Dims out;
  };

  Shape shape(const Dims& a_in, const Dims& b_in) const {
    if (a_in.empty() || b_in.empty()) throw Error(label_ + ": MatMul inputs must have rank >= 1");
    Dims a = a_in, b = b_in;
    const bool a_vec = a.size() == 1, b_vec = b.size() == 1;
    if (a_vec) a.insert(a.begin(), 1);
    if (b_vec) b.push_back(1);
    Shape s;
    s.M = a[a.size() - 2];
    s.K = a.back();
    s.N = b.back();
    if (b[b.size() - 2] != s.K)
      throw Error(label_ + ": A " + dims_string(a_in) + " and B " + dims_string(b_in) + " disagree on K");
    const size_t ra = a.size() - 2, rb = b.size() - 2, r = std::max(ra, rb);
    s.batch.assign(r, 1);
    s.a_batch.assign(r, 1);
    s.b_batch.assign(r, 1);
    for (size_t k = 0; k < r; ++k) {
      const int64_t da = k + ra >= r ? a[k + ra - r] : 1, db = k + rb >= r ? b[k + rb - r] : 1;
      if (da != db && da != 1 && db != 1)
        throw Error(label_ + ": batch dims of A " + dims_string(a_in) + " and B " + dims_string(b_in) +
                    " do not broadcast");
      s.a_batch[k] = da;
      s.b_batch[k] = db;
      s.batch[k] = std::max(da, db);
    }
    s.a_stride.assign(r, 1);
    s.b_stride.assign(r, 1);
    for (size_t k = r; k-- > 1;) {
      s.a_stride[k - 1] = s.a_stride[k] * s.a_batch[k];
      s.b_stride[k - 1] = s.b_stride[k] * s.b_batch[k];
    }
    s.b_batch_free = product(s.b_batch) == 1 && s.a_batch == s.batch;
    s.out = s.batch;
    if (!a_vec) s.out.push_back(s.M);
    if (!b_vec) s.out.push_back(s.N);
    return s;
  }

  std::string label_;
  Operand a_, b_;
};

}  // namespace

std::unique_ptr<Kernel> make_gemm(const KernelSpec& s) { return std::make_unique<GemmKernel>(s); }
std::unique_ptr<Kernel> make_matmul(const KernelSpec& s) { return std::make_unique<MatMulKernel>(s); }

}  // namespace frugal::cpu
