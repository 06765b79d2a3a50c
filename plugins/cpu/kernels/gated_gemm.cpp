// A Gemm after a gate (docs/GATING.md, the paper's section 3.2): its input A
// [N, F] holds, per sample, blocks of `block` columns (a channel's H*W values
// after a Flatten) that are all zero where the channel was switched off. B is
// kept as [F, N] (transposed at compile time when transB), so that a block of
// inputs is a contiguous block of rows of B; per sample, each run of nonzero
// blocks goes through one sgemv on its rows, the outputs split over the threads,
// and the weights of off channels are never read.
// When every sample has most of its columns active, one sgemm over the batch, on
// oneDNN's sgemm where the build has it (kernels/parallel_gemm.h: Debian's
// OpenBLAS runs AVX2 kernels on CPUs it does not know, oneDNN AVX-512).
#include <cblas.h>

#include <cstring>

#include "common/gate_params.h"
#include "frugal/model/ops/matmul.h"
#include "kernels/conv_onednn.h"
#include "kernels/gated.h"
#include "kernels/kernel_util.h"
#include "kernels/parallel_gemm.h"

namespace frugal::cpu {

namespace {

class GatedGemmKernel : public Kernel {
 public:
  GatedGemmKernel(const KernelSpec& s, std::vector<float> b, int64_t features, int64_t block)
      : b_(std::move(b)),
        F_(features),
        N_(s.output[1]),
        block_(block),
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

  // Two ints per run of nonzero blocks: at most one run per two blocks, plus one.
  uint64_t workspace_bytes(const std::vector<Dims>&) const override {
    return (uint64_t(F_ / block_ + 2) * sizeof(int32_t) + 63) / 64 * 64;  // whole lines, as gated_conv.cpp
  }
  Epilogue* epilogue() override { return &epilogue_; }
  // Both paths: one sgemm over the batch, or per sample sgemv over its nonzero blocks.
  std::string algorithm() const override {
    return std::string("skipping off input channels: one ") + (onednn_gemm_ ? "oneDNN " : "") +
           "sgemm when every sample has 0.8 of its columns active, else sgemv over nonzero input blocks";
  }

  void run(const KernelArgs& a) const override {
    const int64_t n = a.in_dims[0][0];
    int32_t* runs = reinterpret_cast<int32_t*>(a.ws);
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
        stats.macs += run_sample(a.in[0] + s * F_, a.out + s * N_, runs, a.pool);
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

  int64_t run_sample(const float* x, float* y, int32_t* runs, ThreadPool* pool) const {
    const int64_t active = active_columns(x, runs), count = find_runs(x, runs);
    parallel_range(pool, N_, 64, [&](int64_t o0, int64_t o1) {
      std::memset(y + o0, 0, sizeof(float) * size_t(o1 - o0));
      for (int64_t r = 0; r < count; ++r) {  // B [F, N]: y[o] += x[f0:f0+len] . B[f0:f0+len, o]
        const int64_t f0 = runs[2 * r], len = runs[2 * r + 1] - f0;
        cblas_sgemv(CblasRowMajor, CblasTrans, int(len), int(o1 - o0), alpha_, b_.data() + f0 * N_ + o0,
                    int(N_), x + f0, 1, 1.0f, y + o0, 1);
      }
    });
    epilogue_.apply_rows(y, 1, N_);
    return active * N_;
  }

  std::vector<float> b_;
  int64_t F_ = 0, N_ = 0, block_ = 1;
  float alpha_ = 1.0f;
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
