// A Gemm after a gate (docs/GATING.md, the paper's section 3.2): its input A
// [N, F] holds, per sample, blocks of `block` columns (a channel's H*W values
// after a Flatten) that are all zero where the channel was switched off. B is
// kept as [F, N] (transposed at compile time when transB), so that a block of
// inputs is a contiguous block of rows of B; per sample, the rows of the nonzero
// blocks are shared out over the threads, each adding its rows times their
// inputs into its own partial output (whole rows streamed from memory: split by
// outputs, an sgemv per run and thread read 8 KB of every 16 KB row, at 12 GB/s
// where the dense sgemm read 21), then the partials summed; the weights of off
// channels are never read.
// When every sample has most of its columns active, one sgemm over the batch, on
// oneDNN's sgemm where the build has it (kernels/parallel_gemm.h: Debian's
// OpenBLAS runs AVX2 kernels on CPUs it does not know, oneDNN AVX-512).

#include <cstring>

#include "common/gate_params.h"
#include "frugal/model/ops/matmul.h"
#include "kernels/conv_onednn.h"
#include "kernels/gated.h"
#include "kernels/kernel_util.h"
#include "kernels/parallel_gemm.h"
#include "kernels/vector_math.h"

namespace frugal::cpu {

namespace {

class GatedGemmKernel : public Kernel {
 public:
  GatedGemmKernel(const KernelSpec& s, std::vector<float> b, int64_t features, int64_t block)
      : b_(std::move(b)),
        F_(features),
        N_(s.output[1]),
        block_(block),
        threads_(std::max(1, s.threads)),
        onednn_gemm_(s.conv_path != "blas" && onednn_available()) {
    const ops::Gemm& op = s.op_as<ops::Gemm>();
    if (op.trans_b) {  // kept as [F, N]: a block of inputs is then a contiguous block of rows of B
      std::vector<float> t(b_.size());
      for (int64_t o = 0; o < N_; ++o)
        for (int64_t f = 0; f < F_; ++f) t[size_t(f * N_ + o)] = b_[size_t(o * F_ + f)];
      b_ = std::move(t);
    }
    alpha_ = op.alpha;
    if (has_input(s, 2)) {
      const std::vector<float> c = constant_floats(s, 2, "input C");
      std::vector<float> shift(static_cast<size_t>(N_));
      for (int64_t j = 0; j < N_; ++j) shift[size_t(j)] = op.beta * c[size_t(j)];
      epilogue_.add_affine(std::vector<float>(size_t(N_), 1.0f), shift);
    }
  }

  // A partial output per thread, then two ints per run of nonzero blocks (at most one run per
  // two blocks, plus one).
  uint64_t workspace_bytes(const std::vector<Dims>&) const override {
    return uint64_t(partial_floats()) * sizeof(float) +
           (uint64_t(F_ / block_ + 2) * sizeof(int32_t) + 63) / 64 * 64;  // whole lines, as gated_conv.cpp
  }
  Epilogue* epilogue() override { return &epilogue_; }
  // Both paths: one sgemm over the batch, or per sample the rows of its nonzero blocks.
  std::string algorithm() const override {
    return std::string("skipping off input channels: one ") + (onednn_gemm_ ? "oneDNN " : "") +
           "sgemm when every sample has 0.8 of its columns active, else the nonzero input blocks' rows "
           "shared out over the threads";
  }

  void run(const KernelArgs& a) const override {
    const int64_t n = a.in_dims[0][0];
    float* partials = static_cast<float*>(a.ws);
    int32_t* runs = reinterpret_cast<int32_t*>(partials + partial_floats());
    // One sgemm over the batch unless some sample has less than kDenseShare of its columns active.
    // Effective MACs count the active columns whichever path runs (as gated convs do, and the
    // Vulkan executor): the dense path's extra work is the kernel's choice.
    bool any_zero = false;
    int64_t active = 0;
    for (int64_t s = 0; s < n && !any_zero; ++s) {
      const int64_t columns = active_columns(a.in[0] + s * F_, runs);
      active += columns;
      any_zero = double(columns) < kDenseShare * double(F_);
    }
    exec::GateStats stats;
    stats.samples = n;
    if (!any_zero) {
      parallel_sgemm(false, false, n, N_, F_, alpha_, a.in[0], F_, b_.data(), N_, 0.0f, a.out, N_, a.pool,
                     onednn_gemm_);
      epilogue_.apply_rows(a.out, n, N_);
      stats.macs = active * N_;
    } else {
      for (int64_t s = 0; s < n; ++s)
        stats.macs += run_sample(a.in[0] + s * F_, a.out + s * N_, runs, partials, a.pool);
    }
    if (a.gate_stats) a.gate_stats->add(stats);
  }

 private:
  static constexpr double kDenseShare = 0.8;  // algorithm() names it

  int64_t active_columns(const float* x, int32_t* runs) const {
    const int64_t count = find_runs(x, runs);
    int64_t active = 0;
    for (int64_t r = 0; r < count; ++r) active += runs[2 * r + 1] - runs[2 * r];
    return active;
  }

  // Runs [runs[2r], runs[2r+1]) of columns whose blocks are not all zero; returns their count.
  int64_t find_runs(const float* x, int32_t* runs) const {
    int64_t count = 0;
    bool open = false;
    for (int64_t b = 0; b < F_ / block_; ++b) {
      bool zero = true;
      for (int64_t k = b * block_; k < (b + 1) * block_ && zero; ++k) zero = x[k] == 0.0f;
      if (!zero && !open) {
        runs[2 * count] = int32_t(b * block_);
        open = true;
      } else if (zero && open) {
        runs[2 * count++ + 1] = int32_t(b * block_);
        open = false;
      }
    }
    if (open) runs[2 * count++ + 1] = int32_t(F_);
    return count;
  }

  int64_t partial_floats() const { return (threads_ * N_ + 15) / 16 * 16; }

  // Per sample: the active rows of B in `threads_` shares, each summed into its partial output.
  int64_t run_sample(const float* x, float* y, int32_t* runs, float* partials, ThreadPool* pool) const {
    const int64_t active = active_columns(x, runs), count = find_runs(x, runs);
    const int64_t parts = std::max<int64_t>(1, std::min<int64_t>(threads_, active / 16));
    parallel_range(pool, parts, 1, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p)
        add_share(x, runs, count, active * p / parts, active * (p + 1) / parts, partials + p * N_);
    });
    parallel_range(pool, N_, 256, [&](int64_t o0, int64_t o1) {
      for (int64_t o = o0; o < o1; ++o) {
        float sum = 0.0f;
        for (int64_t p = 0; p < parts; ++p) sum += partials[p * N_ + o];
        y[o] = alpha_ * sum;
      }
    });
    epilogue_.apply_rows(y, 1, N_);
    return active * N_;
  }

  // Active rows [lo, hi) (counted over the runs in order) times their inputs into part [N].
  void add_share(const float* x, const int32_t* runs, int64_t count, int64_t lo, int64_t hi,
                 float* part) const {
    std::memset(part, 0, sizeof(float) * size_t(N_));
    int64_t seen = 0;
    for (int64_t r = 0; r < count && seen < hi; ++r) {
      const int64_t f0 = runs[2 * r], len = runs[2 * r + 1] - f0;
      const int64_t from = std::max<int64_t>(lo - seen, 0), to = std::min(hi - seen, len);
      if (from < to) add_scaled_rows(part, b_.data() + (f0 + from) * N_, N_, x + f0 + from, to - from, N_);
      seen += len;
    }
  }

  std::vector<float> b_;
  int64_t F_ = 0, N_ = 0, block_ = 1;
  float alpha_ = 1.0f;
  int64_t threads_ = 1;
  bool onednn_gemm_ = false;  // the dense path's sgemm on oneDNN
  Epilogue epilogue_;
};

}  // namespace

std::unique_ptr<Kernel> make_gated_gemm(const KernelSpec& s) {
  const ops::Gemm& op = s.op_as<ops::Gemm>();
  if (op.trans_a || s.inputs.size() < 2 || !s.inputs[1].constant || s.inputs[0].constant) return nullptr;
  const Dims& bd = s.inputs[1].dims;
  if (bd.size() != 2 || s.output.size() != 2) return nullptr;
  const int64_t F = op.trans_b ? bd[1] : bd[0], N = s.output[1];
  if (has_input(s, 2)) {
    const InputInfo& c = s.inputs[2];
    if (!c.constant || product(c.dims) != N || c.dims.empty() || c.dims.back() != N || c.dims.size() > 2)
      return nullptr;
  }
  const int64_t block = s.zero_block > 0 && F % s.zero_block == 0 ? s.zero_block : 1;
  return std::make_unique<GatedGemmKernel>(s, constant_floats(s, 1, "input B"), F, block);
}

}  // namespace frugal::cpu
