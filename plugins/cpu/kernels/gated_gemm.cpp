// A Gemm after a gate (docs/GATING.md, the paper's section 3.2): its input A
// [N, F] holds, per sample, blocks of `block` columns (a channel's H*W values
// after a Flatten) that are all zero where the channel was switched off. B is
// kept as [F, N] (transposed at compile time when transB), so that a block of
// inputs is a contiguous block of rows of B. Per group of up to 8 samples, the
// rows of the blocks nonzero in any of them are shared out over the threads,
// each thread streaming its rows once (whole 16 KB rows at alexnet's 4096
// outputs: split by outputs, an sgemv per run and thread read 8 KB of every
// row, at 12 GB/s where the dense sgemm read 21) and adding four at a time
// times the inputs of each sample whose block is on, into its own partial
// outputs; then the partials summed. Weights of channels off in every sample
// of a group are never read. Always this path, also with every column on: it
// streams the weights as fast as the dense Gemm's sgemm (batch 8, every block
// on, alexnet's classifier.1: oneDNN's sgemm on these unpacked [F, N] weights
// took 1.9 x its time).

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "common/gate_params.h"
#include "frugal/model/ops/matmul.h"
#include "kernels/gated.h"
#include "kernels/kernel_util.h"
#include "kernels/vector_math.h"

namespace frugal::cpu {

namespace {

class GatedGemmKernel : public Kernel {
 public:
  GatedGemmKernel(const KernelSpec& s, int64_t features, int64_t block)
      : b_(constant_floats(s, 1, "input B")),
        F_(features),
        N_(s.output[1]),
        block_(block),
        threads_(std::max(1, s.threads)) {
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

  // Per thread a partial output for each sample of a group, then per sample of a group a flag
  // per block of columns, and the group's runs.
  uint64_t workspace_bytes(const std::vector<Dims>& in) const override {
    const int64_t g = group(in[0][0]);
    return uint64_t(partial_floats(g)) * sizeof(float) + flag_bytes(g) +
           (uint64_t(blocks() + 2) * 2 * sizeof(int32_t) + 63) / 64 * 64;  // whole lines, as gated_conv.cpp
  }
  Epilogue* epilogue() override { return &epilogue_; }
  std::string algorithm() const override {
    return "skipping off input channels: per group of up to 8 samples, the rows of the input blocks "
           "nonzero in any of them shared out over the threads, each row read once";
  }

  // Effective MACs count each sample's active columns (as gated convs do, and the Vulkan executor).
  void run(const KernelArgs& a) const override {
    const int64_t n = a.in_dims[0][0], g = group(n);
    float* partials = static_cast<float*>(a.ws);
    uint8_t* flags = reinterpret_cast<uint8_t*>(partials + partial_floats(g));
    int32_t* runs = reinterpret_cast<int32_t*>(flags + flag_bytes(g));
    exec::GateStats stats;
    stats.samples = n;
    for (int64_t s = 0; s < n; s += g) {
      const int64_t m = std::min(g, n - s), count = union_runs(a.in[0] + s * F_, m, flags, runs);
      for (int64_t j = 0; j < m * blocks(); ++j) stats.macs += flags[j] * block_ * N_;
      run_group(a.in[0] + s * F_, a.out + s * N_, m, flags, runs, count, partials, a.pool);
    }
    if (a.gate_stats) a.gate_stats->add(stats);
  }

 private:
  // Samples whose active rows are read in one stream: at batch 8 one stream per sample read
  // alexnet's classifier.1 weights 8 times (1.6-7 x the dense sgemm's time at activity 1).
  static constexpr int64_t kGroup = 8;

  int64_t group(int64_t n) const { return std::max<int64_t>(1, std::min(n, kGroup)); }
  int64_t blocks() const { return F_ / block_; }
  int64_t partial_floats(int64_t g) const { return (threads_ * g * N_ + 15) / 16 * 16; }
  uint64_t flag_bytes(int64_t g) const { return (uint64_t(g * blocks()) + 63) / 64 * 64; }

  // flags[b] = whether block b of x is not all zero.
  void find_blocks(const float* x, uint8_t* flags) const {
    for (int64_t b = 0; b < blocks(); ++b) {
      bool zero = true;
      for (int64_t k = b * block_; k < (b + 1) * block_ && zero; ++k) zero = x[k] == 0.0f;
      flags[b] = !zero;
    }
  }

  // The g samples' flags, and runs [runs[2r], runs[2r + 1]) of columns whose block is nonzero in
  // any of them; returns the runs' count.
  int64_t union_runs(const float* x, int64_t g, uint8_t* flags, int32_t* runs) const {
    for (int64_t j = 0; j < g; ++j) find_blocks(x + j * F_, flags + j * blocks());
    int64_t count = 0;
    bool open = false;
    for (int64_t b = 0; b < blocks(); ++b) {
      bool any = false;
      for (int64_t j = 0; j < g && !any; ++j) any = flags[j * blocks() + b];
      if (any && !open) runs[2 * count] = int32_t(b * block_);
      if (!any && open) runs[2 * count++ + 1] = int32_t(b * block_);
      open = any;
    }
    if (open) runs[2 * count++ + 1] = int32_t(F_);
    return count;
  }

  // The runs' rows of B in `threads_` shares, each share adding every row it reads into the
  // partial output of each sample whose block is on, then the partials summed.
  void run_group(const float* x, float* y, int64_t g, const uint8_t* flags, const int32_t* runs,
                 int64_t count, float* partials, ThreadPool* pool) const {
    int64_t rows = 0;
    for (int64_t r = 0; r < count; ++r) rows += runs[2 * r + 1] - runs[2 * r];
    const int64_t parts = std::max<int64_t>(1, std::min<int64_t>(threads_, rows / 16));
    parallel_range(pool, parts, 1, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p)
        add_share(x, g, flags, runs, count, rows * p / parts, rows * (p + 1) / parts, partials + p * g * N_);
    });
    parallel_range(pool, g * N_, 256, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i) {
        float sum = 0.0f;
        for (int64_t p = 0; p < parts; ++p) sum += partials[p * g * N_ + i];
        y[i] = alpha_ * sum;
      }
    });
    epilogue_.apply_rows(y, g, N_);
  }

  // Rows [lo, hi) of the runs (counted in order) times each sample's inputs into its part
  // [g][N], a block's stretch at a time, each sample only where its block is on.
  void add_share(const float* x, int64_t g, const uint8_t* flags, const int32_t* runs, int64_t count,
                 int64_t lo, int64_t hi, float* part) const {
    std::memset(part, 0, sizeof(float) * size_t(g * N_));
    int64_t seen = 0;
    for (int64_t r = 0; r < count && seen < hi; ++r) {
      const int64_t f0 = runs[2 * r], len = runs[2 * r + 1] - f0;
      for (int64_t u = std::max<int64_t>(lo - seen, 0); u < std::min(hi - seen, len);) {
        const int64_t f = f0 + u, b = f / block_;
        const int64_t n = std::min(hi - seen - u, (b + 1) * block_ - f);
        add_scaled_rows(part, N_, b_.data() + f * N_, N_, x + f, F_, flags + b, blocks(), g, n, N_);
        u += n;
      }
      seen += len;
    }
  }

  std::vector<float> b_;  // B as [F, N]
  int64_t F_ = 0, N_ = 0, block_ = 1;
  float alpha_ = 1.0f;
  int64_t threads_ = 1;
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
  return std::make_unique<GatedGemmKernel>(s, F, block);
}

}  // namespace frugal::cpu
