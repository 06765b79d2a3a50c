// A gated conv (docs/GATING.md): per sample, the input channels that are not
// all zero (a gate's consumer) and the kernels its gate switches on (the gate
// computed first and cheaply: the input pooled, then the 1x1 on that vector);
// the active kernels' weights for the active channels gathered into the
// workspace, the im2col of the active channels only, one sgemm on
// [K_active, C_active * kh * kw] per chunk of output rows (oneDNN's sgemm where
// the build has it and the conv path is not "blas": AVX-512 kernels, where
// OpenBLAS 0.3.21 takes its Haswell ones on this AMD EPYC of CPU family 26;
// docs/BENCHMARKS.md, bench-gate run of 2026-11-26 14:59), its rows scattered
// to their channels with the epilogue (bias, BN, activations); switched-off
// channels are exact zeros. A sample with most of its work active (at least
// dense_share() of the kernel x channel pairs) runs the registry's dense conv
// instead, then zeroes its off channels: at full activity a gated conv costs
// the dense one plus its gate (the dense conv is the registry's, oneDNN where the
// dense network takes it). A consumer that is not gated also keeps its weights as
// [K, M], so that its active input channels are whole rows to gather.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "common/gate_activity.h"
#include "common/gate_params.h"
#include "common/window.h"
#include "frugal/model/ops/conv.h"
#include "kernels/conv_onednn.h"
#include "kernels/gated.h"
#include "kernels/kernel_util.h"
#include "kernels/parallel_gemm.h"

namespace frugal::cpu {

using exec::Window;

namespace {

// The sum of a plane and whether any value is not zero (NaN counts as not
// zero, -0 as zero), in one pass: four independent accumulators of eight lanes
// (GCC vector types), compiled per instruction set. Built for baseline x86-64
// only, the eight-lane vectors went through the stack on every iteration, and
// one chain of additions waited out each one's latency: the pass took longer
// than squeezenet1_1's 1x1 squeeze convs that read the same input.
using Lanes = float __attribute__((vector_size(32)));
using LaneBits = uint32_t __attribute__((vector_size(32)));
__attribute__((target_clones("avx512f", "avx2", "default"))) void plane_sums(const float* p, int64_t n,
                                                                             float& sum, bool& nonzero) {
  Lanes s0 = {}, s1 = {}, s2 = {}, s3 = {};
  LaneBits b0 = {}, b1 = {};
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    Lanes x0, x1, x2, x3;
    std::memcpy(&x0, p + i, sizeof x0);
    std::memcpy(&x1, p + i + 8, sizeof x1);
    std::memcpy(&x2, p + i + 16, sizeof x2);
    std::memcpy(&x3, p + i + 24, sizeof x3);
    s0 += x0;
    s1 += x1;
    s2 += x2;
    s3 += x3;
    b0 |= (LaneBits)x0 | (LaneBits)x1;
    b1 |= (LaneBits)x2 | (LaneBits)x3;
  }
  for (; i + 8 <= n; i += 8) {
    Lanes x;
    std::memcpy(&x, p + i, sizeof x);
    s0 += x;
    b0 |= (LaneBits)x;
  }
  const Lanes s = (s0 + s1) + (s2 + s3);
  const LaneBits bits = b0 | b1;
  float t = 0.0f;
  uint32_t any = 0;
  for (int k = 0; k < 8; ++k) {
    t += s[k];
    any |= bits[k];
  }
  for (; i < n; ++i) {
    uint32_t b;
    std::memcpy(&b, p + i, sizeof b);
    t += p[i];
    any |= b;
  }
  sum = t;
  nonzero = (any & 0x7fffffffu) != 0;
}

class GatedConvKernel : public Kernel {
 public:
  explicit GatedConvKernel(const KernelSpec& s)
      : threads_(std::max(1, s.threads)), onednn_gemm_(s.conv_path != "blas" && onednn_available()) {
    require_float_activation(s, 0, "input X");
    exec::ConvShape c = exec::ConvShape::from_spec(s);
    if (c.group != 1)
      unsupported(s, "gated convs are group 1 only, this one has group " + std::to_string(c.group));
    weight_ = std::move(c.weights);
    win_ = c.window;
    C_ = c.C;
    M_ = c.M;
    taps_ = win_.kh * win_.kw;
    K_ = C_ * taps_;
    // The dense conv (with the bias in its epilogue) for samples with most of their work on; its
    // epilogue is the one BN and activations join, and the one the reduced path applies too.
    dense_ = kernels().make(s);
    epilogue_ = dense_->epilogue();
    if (!epilogue_) {
      dense_.reset();
      epilogue_ = &own_epilogue_;
      if (!c.bias.empty()) own_epilogue_.add_affine(std::vector<float>(size_t(M_), 1.0f), c.bias);
    }
    if (s.gate) {
      gate_ = *s.gate;
      has_gate_ = true;
      if (gate_.kernels != M_ || gate_.channels != C_)
        fail(s, "its gate switches " + std::to_string(gate_.kernels) + " kernels over " +
                    std::to_string(gate_.channels) + " input channels; the conv has " + std::to_string(M_) +
                    " kernels over " + std::to_string(C_) + " channels");
    }
    skip_inputs_ = s.zero_block > 0;
    // A consumer that is not gated itself keeps its weights as [K, M] too: its active
    // input channels are then whole rows, and gathering them reads only their weights
    // (from [M, K], a channel's taps are a few floats in every row: every cache line).
    if (skip_inputs_ && !has_gate_) {
      weight_t_.resize(weight_.size());
      for (int64_t m = 0; m < M_; ++m)
        for (int64_t k = 0; k < K_; ++k) weight_t_[size_t(k * M_ + m)] = weight_[size_t(m * K_ + k)];
    }
    pointwise_ = taps_ == 1 && win_.sh == 1 && win_.sw == 1 && win_.pt == 0 && win_.pl == 0 && win_.pb == 0 &&
                 win_.pr == 0;
    // Chunks of whole output rows whose im2col block and output block hold about
    // kChunkFloats together (as the dense conv), at least 128 columns.
    chunk_rows_ = win_.Ho;
    const int64_t target = std::max<int64_t>(128, kChunkFloats / (K_ + M_));
    if (win_.Ho * win_.Wo > 2 * target) {
      const int64_t rows = std::max<int64_t>(1, target / win_.Wo);
      const int64_t chunks = (win_.Ho + rows - 1) / rows;
      chunk_rows_ = (win_.Ho + chunks - 1) / chunks;
    }
  }

  // The pooled input and the two index lists, then either the dense conv's
  // workspace or the gathered weights, one im2col chunk and one compact output
  // chunk: the dense upper bound, whatever the activity.
  uint64_t workspace_bytes(const std::vector<Dims>& in) const override {
    const int64_t cols = chunk_rows_ * win_.Wo;
    const uint64_t reduced = uint64_t(M_ * K_ + slots() * (K_ * cols + M_ * cols)) * sizeof(float);
    std::vector<Dims> one = in;
    one[0][0] = 1;
    const uint64_t dense = dense_ ? dense_->workspace_bytes(one) : 0;
    // Whole 64-byte lines: the arena places a chunk at the top of its block at a 64-byte
    // boundary, and a size that is not a multiple left a gap below which the next chunk
    // did not fit (gated squeezenet1_1 at batch 1 moved features.0's 3 MB output in every run).
    return (header_floats() * sizeof(float) + std::max(reduced, dense) + 63) / 64 * 64;
  }

  Epilogue* epilogue() override { return epilogue_; }

  // The dense conv's own preparation (its oneDNN primitive, made once its epilogue is
  // complete): the samples that run densely take the same kernel as the dense network.
  void prepare() override {
    if (!dense_) return;
    dense_->prepare();
    winograd_dense_ = dense_->algorithm().find("wino") != std::string::npos;
    packed_dense_ = dense_->algorithm().find("packed") != std::string::npos;
  }
  uint64_t packed_weight_bytes() const override { return dense_ ? dense_->packed_weight_bytes() : 0; }

  // Both paths a sample may take: the dense conv (the registry's, named as the dense network's
  // layer is) from a share of the active kernel x channel pairs, else the reduced conv.
  std::string algorithm() const override {
    std::string what = has_gate_ ? "gated" : "";
    if (skip_inputs_) what += what.empty() ? "skipping off input channels" : ", skipping off input channels";
    const std::string reduced =
        std::string("im2col + ") + (onednn_gemm_ ? "oneDNN " : "") + "sgemm on the active kernels x channels";
    if (!dense_) return what + ": " + reduced;
    char share[32];
    std::snprintf(share, sizeof share, "%g", dense_share());
    return what + ": " + dense_->algorithm() + " from " + share + " of the kernel x channel pairs, else " +
           reduced;
  }

  void run(const KernelArgs& a) const override {
    const int64_t n = a.in_dims[0][0];
    Scratch w = scratch(a.ws);
    exec::GateStats stats;
    for (int64_t s = 0; s < n; ++s) run_sample(a, s, w, stats);
    if (a.gate_stats) a.gate_stats->add(stats);
  }

 private:
  static constexpr int64_t kChunkFloats = 96 * 1024;
  // A sample with at least this share of its kernel x channel pairs on runs densely. With
  // OpenBLAS's sgemm (conv path "blas") the reduced conv runs at 0.45-0.67 of the dense conv's
  // rate (docs/BENCHMARKS.md, bench-gate), so above about 0.6 of the work it costs more than the
  // whole dense conv (0.8 before: squeezenet1_1's consumers of Relu outputs with a third of their
  // channels all zero, and resnet18 at activity 0.75, ran slower than dense); on output planes
  // under kSmallPlane (7x7) at about 0.45 (resnet18's layer4 at half its pairs took 1.03-1.21 of
  // the dense conv's time), so from 0.45. With oneDNN's sgemm, 0.9 and 0.75: of 0.6/0.45,
  // 0.75/0.6 and 0.9/0.75 (two rounds each, one timed call, 2026-11-26 15:14) the last gave
  // resnet18 at activity 0.75 0.969 and 0.944 of dense (0.6/0.45: 1.049, 1.033), at 0.5 0.728
  // and 0.711 (0.759, 0.772), squeezenet1_1 within the rounds' noise. Where the dense conv
  // runs oneDNN's Winograd kernels (1.7-2.2x its direct ones on 14x14 and larger planes, 1.2x at
  // 7x7) 0.45 and 0.6: resnet18 at activity 0.75 went from 1.29-1.32 of dense to 1.06-1.09, at 1
  // from 1.12-1.14 to 1.03 (`frugal bench-gate --nets squeezenet1_1,resnet18 --batch 1
  // --threads 2`, two rounds each way, 2026-11-27 05:58); squeezenet1_1 within the noise.
  static constexpr double kDenseShare = 0.6, kSmallPlaneDenseShare = 0.45;
  static constexpr double kOnednnDenseShare = 0.9, kOnednnSmallPlaneDenseShare = 0.75;
  static constexpr double kWinogradDenseShare = 0.45, kWinogradSmallPlaneDenseShare = 0.6;
  // Where the dense conv runs the packed register tiles (kernels/conv_1x1.h), 0.45: those
  // tiles run near the machine's peak, and squeezenet1_1's consumers of gated concats (its
  // squeeze convs) and gated expand1x1 convs took 1.3-3.2x the dense network's layers at
  // activity 1, where the Relus' all-zero channels leave 0.65-0.96 of their pairs on.
  // Per layer (2 threads, time_layer, each path forced; docs/BENCHMARKS.md) the reduced conv took 1.6-2.6x
  // the dense path's time at 0.75 of the pairs, 1.1-1.3x at 0.5, 0.5-1.3x at 0.25. Of 0.3 and 0.45 against
  // 0.9 (`frugal bench-gate --nets squeezenet1_1 --repeat 11`, three rounds each way, 2026-11-27 07:56 and
  // 07:57), 0.45 gave squeezenet1_1 1.17-1.19 -> 1.08-1.13 of dense at activity 1, 1.17-1.19 -> 1.12-1.16 at
  // 0.75, 0.88-0.90 -> 0.85-0.88 at 0.5; 0.3 was 6-7% slower than 0.9 at 0.5.
  static constexpr double kPackedDenseShare = 0.45;
  static constexpr int64_t kSmallPlane = 100;
  double dense_share() const {
    const bool small = win_.Ho * win_.Wo < kSmallPlane;
    if (winograd_dense_) return small ? kWinogradSmallPlaneDenseShare : kWinogradDenseShare;
    if (packed_dense_) return kPackedDenseShare;
    if (onednn_gemm_) return small ? kOnednnSmallPlaneDenseShare : kOnednnDenseShare;
    return small ? kSmallPlaneDenseShare : kDenseShare;
  }

  struct Scratch {
    float *pooled, *weights, *cols, *rest;  // cols: the slots' im2col and output chunks
    int32_t *in_idx, *out_idx;
  };
  int64_t chunks() const { return (win_.Ho + chunk_rows_ - 1) / chunk_rows_; }
  // Participants that take whole chunks, each with its own im2col and output buffers.
  int64_t slots() const { return std::max<int64_t>(1, std::min<int64_t>(threads_, chunks())); }
  // Pooled input [C], index lists [C] and [M] (in whole 64-byte lines), then the rest:
  // gathered weights, then per slot an im2col chunk and a compact output chunk.
  int64_t header_floats() const { return (2 * C_ + M_ + 15) / 16 * 16; }  // 64-byte lines
  Scratch scratch(float* ws) const {
    Scratch w;
    w.pooled = ws;
    w.in_idx = reinterpret_cast<int32_t*>(w.pooled + C_);
    w.out_idx = w.in_idx + C_;
    w.rest = ws + header_floats();
    w.weights = w.rest;
    w.cols = w.weights + M_ * K_;
    return w;
  }

  // The active input channels (not all zero) and, from the gate, the active kernels.
  // One pass over the input (in parallel over channels) gives both.
  // activity >= 0: the kernels on at that activity instead of the gate's (common/gate_activity.h).
  void find_active(const float* xs, const Scratch& w, int64_t& nin, int64_t& nout, ThreadPool* pool,
                   double activity) const {
    const int64_t plane = win_.H * win_.W;
    if (skip_inputs_ || has_gate_)
      parallel_range(pool, C_, std::max<int64_t>(1, 16384 / plane), [&](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c) {
          float sum = 0.0f;
          bool nonzero = true;
          if (has_gate_)
            plane_sums(xs + c * plane, plane, sum, nonzero);
          else  // a consumer only: stop at the first value that is not zero
            nonzero = std::any_of(xs + c * plane, xs + (c + 1) * plane, [](float v) { return v != 0.0f; });
          w.pooled[c] = sum / float(plane);
          w.in_idx[c] = !skip_inputs_ || nonzero;
        }
      });
    nin = 0;
    for (int64_t c = 0; c < C_; ++c)  // compacted in place: nin <= c
      if (!(skip_inputs_ || has_gate_) || w.in_idx[c]) w.in_idx[nin++] = int32_t(c);
    if (has_gate_ && activity < 0) {
      nout = gate_.kernels_on(w.pooled, w.out_idx);
      return;
    }
    nout = 0;
    for (int64_t m = 0; m < M_; ++m)
      if (!has_gate_ || exec::on_at_activity(m, activity)) w.out_idx[nout++] = int32_t(m);
  }

  void run_sample(const KernelArgs& a, int64_t s, const Scratch& w, exec::GateStats& stats) const {
    const int64_t in_plane = win_.H * win_.W, out_plane = win_.Ho * win_.Wo;
    const float* xs = a.in[0] + s * C_ * in_plane;
    float* ys = a.out + s * M_ * out_plane;
    int64_t nin = 0, nout = 0;
    find_active(xs, w, nin, nout, a.pool, a.gate_activity);
    stats.samples += 1;
    stats.kernels += has_gate_ ? M_ : 0;
    stats.kernels_on += has_gate_ ? nout : 0;
    stats.macs += has_gate_ ? M_ * C_ : 0;
    // Effective MACs: those of the active (kernel, channel) pairs, whichever path computes them
    // (as the Vulkan executor counts; the dense path's extra work is the kernel's choice).
    stats.macs += nout * nin * taps_ * out_plane;
    if (dense_ && double(nout) * double(nin) >= dense_share() * double(M_) * double(C_)) {
      run_dense(a, s, w, nout);
      return;
    }
    const bool dense_in = nin == C_, dense_out = nout == M_;
    zero_off_channels(ys, w, nout);  // the active ones are written below
    if (nout == 0) return;
    const int64_t kc = nin * taps_;
    const float* W = weight_.data();
    const bool by_rows = !weight_t_.empty() && dense_out;  // W is [kc, M] (transposed)
    if (!dense_in || !dense_out) {
      if (by_rows)
        gather_rows(w, nin, a.pool);
      else
        gather_weights(w, nin, nout, a.pool);
      W = w.weights;
    }
    // Whole chunks per participant when there are several (as the dense conv), else one
    // chunk with the threads inside its im2col and sgemm.
    const int64_t nchunks = chunks(), cols_max = chunk_rows_ * win_.Wo;
    auto chunk = [&](int64_t ch, int slot, ThreadPool* pool) {
      const int64_t oh0 = ch * chunk_rows_, oh1 = std::min(win_.Ho, oh0 + chunk_rows_), col0 = oh0 * win_.Wo,
                    cols = (oh1 - oh0) * win_.Wo;
      float* col_buf = w.cols + slot * (K_ + M_) * cols_max;
      float* out_buf = col_buf + K_ * cols_max;
      const float* B = xs + col0;
      int64_t ldb = in_plane;
      if (!(pointwise_ && dense_in)) {
        parallel_range(pool, kc, std::max<int64_t>(1, 16384 / cols),
                       [&](int64_t r0, int64_t r1) { im2col_rows(xs, w, col_buf, r0, r1, oh0, oh1); });
        B = col_buf;
        ldb = cols;
      }
      float* C = dense_out ? ys + col0 : out_buf;
      const int64_t ldc = dense_out ? out_plane : cols;
      if (kc > 0)
        parallel_sgemm(by_rows, false, nout, cols, kc, 1.0f, W, by_rows ? M_ : kc, B, ldb, 0.0f, C, ldc, pool,
                       onednn_gemm_);
      else
        for (int64_t r = 0; r < nout; ++r) std::memset(C + r * ldc, 0, sizeof(float) * size_t(cols));
      parallel_range(pool, nout, 8, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r) {
          const int64_t m = w.out_idx[r];
          float* dst = ys + m * out_plane + col0;
          if (!dense_out) std::memcpy(dst, C + r * ldc, sizeof(float) * size_t(cols));
          epilogue_->apply(dst, m, cols);
        }
      });
    };
    if (a.pool && a.pool->size() > 1 && nchunks > 1)
      a.pool->parallel_for(nchunks, [&](int64_t ch, int slot) { chunk(ch, slot, nullptr); });
    else
      for (int64_t ch = 0; ch < nchunks; ++ch) chunk(ch, 0, a.pool);
  }

  // Sample s through the dense conv, then its off channels zeroed (their indices
  // are those not in out_idx, which is ascending).
  void run_dense(const KernelArgs& a, int64_t s, const Scratch& w, int64_t nout) const {
    const int64_t out_plane = win_.Ho * win_.Wo;
    KernelArgs d;
    d.in = {a.in[0] + s * C_ * win_.H * win_.W};
    d.in_dims = a.in_dims;
    d.in_dims[0][0] = 1;
    for (size_t i = 1; i < a.in.size(); ++i) d.in.push_back(a.in[i]);
    d.out = a.out + s * M_ * out_plane;
    d.out_dims = a.out_dims;
    d.out_dims[0] = 1;
    d.ws = w.rest;
    d.pool = a.pool;
    dense_->run(d);
    zero_off_channels(d.out, w, nout);
  }

  // The planes of a sample's output ys whose kernels are off (not in out_idx, which is ascending) zeroed.
  void zero_off_channels(float* ys, const Scratch& w, int64_t nout) const {
    const int64_t out_plane = win_.Ho * win_.Wo;
    for (int64_t m = 0, r = 0; m < M_; ++m) {
      if (r < nout && w.out_idx[r] == m) {
        ++r;
        continue;
      }
      std::memset(ys + m * out_plane, 0, sizeof(float) * size_t(out_plane));
    }
  }

  // weights[r, (i, t)] = weight[out_idx[r], in_idx[i], t]: [nout, nin * taps].
  void gather_weights(const Scratch& w, int64_t nin, int64_t nout, ThreadPool* pool) const {
    const int64_t kc = nin * taps_;
    parallel_range(pool, nout, 16, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const float* src = weight_.data() + w.out_idx[r] * K_;
        float* dst = w.weights + r * kc;
        if (nin == C_) {
          std::memcpy(dst, src, sizeof(float) * size_t(K_));
          continue;
        }
        // A few floats per channel (one for a 1x1 conv): plain loops, not a memcpy call each.
        if (taps_ == 1)
          for (int64_t i = 0; i < nin; ++i) dst[i] = src[w.in_idx[i]];
        else
          for (int64_t i = 0; i < nin; ++i) {
            const float* from = src + w.in_idx[i] * taps_;
            for (int64_t t = 0; t < taps_; ++t) dst[i * taps_ + t] = from[t];
          }
      }
    });
  }

  // weights[(i, t), m] = weight_t_[(in_idx[i], t), m]: [nin * taps, M], whole rows.
  void gather_rows(const Scratch& w, int64_t nin, ThreadPool* pool) const {
    const int64_t row = taps_ * M_;
    parallel_range(pool, nin, std::max<int64_t>(1, 16384 / row), [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i)
        std::memcpy(w.weights + i * row, weight_t_.data() + w.in_idx[i] * row, sizeof(float) * size_t(row));
    });
  }

  // Rows [r0, r1) of cols[(i, ki, kj), (oh - oh0, ow)] = x[in_idx[i], oh*sh - pt + ki*dh, ow*sw - pl + kj*dw]
  // for output rows [oh0, oh1), 0 in the padding.
  void im2col_rows(const float* x, const Scratch& w, float* out, int64_t r0, int64_t r1, int64_t oh0,
                   int64_t oh1) const {
    const Window& v = win_;
    const int64_t cols = (oh1 - oh0) * v.Wo;
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t c = w.in_idx[r / taps_], i = (r % taps_) / v.kw, j = r % v.kw;
      const float* xc = x + c * v.H * v.W;
      float* dst = out + r * cols;
      int64_t lo, hi;
      v.valid_cols(j, lo, hi);
      for (int64_t oh = oh0; oh < oh1; ++oh, dst += v.Wo) {
        const int64_t ih = oh * v.sh - v.pt + i * v.dh;
        if (ih < 0 || ih >= v.H || lo >= hi) {
          std::memset(dst, 0, sizeof(float) * size_t(v.Wo));
          continue;
        }
        const int64_t base = ih * v.W + j * v.dw - v.pl;
        for (int64_t ow = 0; ow < lo; ++ow) dst[ow] = 0.0f;
        if (v.sw == 1)
          std::memcpy(dst + lo, xc + base + lo, sizeof(float) * size_t(hi - lo));
        else
          for (int64_t ow = lo; ow < hi; ++ow) dst[ow] = xc[base + ow * v.sw];
        for (int64_t ow = hi; ow < v.Wo; ++ow) dst[ow] = 0.0f;
      }
    }
  }

  Window win_;
  int threads_ = 1;
  int64_t C_ = 0, M_ = 0, taps_ = 1, K_ = 0, chunk_rows_ = 1;
  std::vector<float> weight_;    // [M, C, kh, kw] = [M, K]
  std::vector<float> weight_t_;  // a consumer that is not gated: also [K, M]
  exec::GateParams gate_;
  bool has_gate_ = false, skip_inputs_ = false, pointwise_ = false;
  bool onednn_gemm_ = false;       // the reduced conv's sgemm on oneDNN (kernels/parallel_gemm.h)
  bool winograd_dense_ = false;    // the dense conv runs oneDNN's Winograd kernels (prepare())
  bool packed_dense_ = false;      // the dense conv runs the packed register tiles (prepare())
  std::unique_ptr<Kernel> dense_;  // the registry's conv
  Epilogue own_epilogue_;          // used only when the dense conv has none
  Epilogue* epilogue_ = nullptr;
};

}  // namespace

std::unique_ptr<Kernel> make_gated_conv(const KernelSpec& s) {
  if (!s.gate && s.op_as<ops::Conv>().group != 1) return nullptr;  // a grouped consumer reads densely
  return std::make_unique<GatedConvKernel>(s);
}

}  // namespace frugal::cpu
