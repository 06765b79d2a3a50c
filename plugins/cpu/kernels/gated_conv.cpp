// A gated conv (docs/GATING.md): per sample, the input channels that are not
// all zero (a gate's consumer) and the kernels its gate switches on (the gate
// computed first and cheaply: the input pooled, then the 1x1 on that vector);
// then the reduced conv on the indexed tiles (kernels/indexed_gemm.h): the
// active channels arranged once into zero-padded phase planes (one per stride
// offset), so that every tap of a channel is a shifted row of them, and the
// active kernels' weights read where they lie; no gathered weights and no
// im2col matrix; on 3x3 stride-1 planes with enough tile rows, Winograd
// F(4x4, 3x3) or F(2x2, 3x3) products on the same tiles (kernels/gated_winograd.h). The
// epilogue (bias, BN, activations) follows on the active channels;
// switched-off channels are exact zeros. A sample with most of its
// work active (at least dense_share() of the kernel x channel pairs) runs the
// registry's dense conv instead, then zeroes its off channels: at full
// activity a gated conv costs the dense one plus its gate (the dense conv is
// the registry's, oneDNN where the dense network takes it).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <utility>

#include "common/gate_activity.h"
#include "common/gate_params.h"
#include "common/window.h"
#include "frugal/model/ops/conv.h"
#include "kernels/gated.h"
#include "kernels/gated_winograd.h"
#include "kernels/indexed_gemm.h"
#include "kernels/kernel_util.h"
#include "kernels/split_columns.h"

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

// Whether any value of a plane is not zero (NaN counts, -0 does not), 32 values a step with an
// exit at the first step that has one: a consumer's input channel is all zeros (its kernel off)
// or not zero within its first values. One value at a time (std::any_of), the all-zero planes
// of a consumer of resnet18's 56 x 56 gated convs took about 60 us a layer.
__attribute__((target_clones("avx512f", "avx2", "default"))) bool plane_nonzero(const float* p, int64_t n) {
  int64_t i = 0;
  for (; i + 32 <= n; i += 32) {
    LaneBits b[4];
    std::memcpy(b, p + i, sizeof b);
    const LaneBits any = (b[0] | b[1]) | (b[2] | b[3]);
    uint64_t w[4];
    std::memcpy(w, &any, sizeof w);
    if (((w[0] | w[1]) | (w[2] | w[3])) & 0x7fffffff7fffffffu) return true;
  }
  for (; i < n; ++i) {
    uint32_t b;
    std::memcpy(&b, p + i, sizeof b);
    if (b & 0x7fffffffu) return true;
  }
  return false;
}

// The first 8-byte boundary at or after p (a pointer table in a workspace of floats).
char* aligned8(float* p) {
  char* c = reinterpret_cast<char*>(p);
  return c + (8 - reinterpret_cast<uintptr_t>(c) % 8) % 8;
}

class GatedConvKernel : public Kernel {
 public:
  explicit GatedConvKernel(const KernelSpec& s)
      : isa_(packed_isa()),
        threads_(std::max(1, s.threads)),
        dense_on_(!switched_off("FRUGAL_CPU_GATED_DENSE")),
        reduced_on_(!switched_off("FRUGAL_CPU_GATED_REDUCED")) {
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
    pointwise_ = taps_ == 1 && win_.sh == 1 && win_.sw == 1 && win_.pt == 0 && win_.pl == 0 && win_.pb == 0 &&
                 win_.pr == 0;
    arrange_taps();
    plan_winograd();
  }

  // Each sample's pooled input and index lists, then either the dense conv's workspace for
  // the whole batch (consecutive dense samples take it together: the dense network's for this
  // layer) or the reduced conv's parts (the arranged input, the output rows and the per-step
  // tables) for the samples side by side: the dense upper bound, whatever the activity.
  uint64_t workspace_bytes(const std::vector<Dims>& in) const override {
    const uint64_t dense = dense_ ? dense_->workspace_bytes(in) : 0;
    // Whole 64-byte lines: the arena places a chunk at the top of its block at a 64-byte
    // boundary, and a size that is not a multiple left a gap below which the next chunk
    // did not fit (gated squeezenet1_1 at batch 1 moved features.0's 3 MB output in every run).
    const uint64_t reduced = uint64_t(reduced_slots(in) * reduced_slot_floats()) * sizeof(float);
    return (lists_floats(in[0][0]) * sizeof(float) + std::max(reduced, dense) + 63) / 64 * 64;
  }

  Epilogue* epilogue() override { return epilogue_; }

  // The dense conv's own preparation (its oneDNN primitive, made once its epilogue is
  // complete): the samples that run densely take the same kernel as the dense network.
  void prepare() override {
    if (!dense_) return;
    dense_->prepare();
    winograd_dense_ = dense_->algorithm().find("wino") != std::string::npos;
  }
  uint64_t packed_weight_bytes() const override {
    return (dense_ ? dense_->packed_weight_bytes() : 0) + wino_u_.size() * sizeof(float);
  }

  // Both paths a sample may take: the dense conv (the registry's, named as the dense network's
  // layer is) from a share of the active kernel x channel pairs, else the reduced conv.
  std::string algorithm() const override {
    std::string what = has_gate_ ? "gated" : "";
    if (skip_inputs_) what += what.empty() ? "skipping off input channels" : ", skipping off input channels";
    const std::string tiles = std::string("indexed tiles on the active kernels x channels (") +
                              (isa_ == PackedIsa::Avx512 ? "avx512"
                               : isa_ == PackedIsa::Avx2 ? "avx2"
                                                         : "plain") +
                              ")";
    char shares[96];
    std::snprintf(shares, sizeof shares, "%g of the kernel x channel pairs", direct_share());
    std::string reduced = tiles;
    if (wino_) {
      const std::string m = std::to_string(wt_.m);
      reduced = "Winograd F(" + m + "x" + m + ", 3x3) on " + tiles + " from " +
                std::to_string(kWinogradMinChannels) + " active input channels, else " + tiles;
      std::snprintf(shares, sizeof shares, "%g of the kernel x channel pairs (%g with Winograd)",
                    direct_share(), kWinogradReducedShare);
    }
    if (!dense_) return what + ": " + reduced;
    return what + ": " + dense_->algorithm() + " from " + shares + ", else " + reduced;
  }

  // Every sample's active lists first, then each run of consecutive samples that take the dense
  // conv in one call (with one call per sample, gated squeezenet1_1 at batch 8 and activity 1
  // took 1.25-1.37 x the dense network's time, 1.10 so), then the others: whole samples side
  // by side, one per thread (each on its own part of the workspace), as many as make whole
  // rounds, the rest each shared out over the threads.
  void run(const KernelArgs& a) const override {
    const int64_t n = a.in_dims[0][0];
    exec::GateStats stats;
    for (int64_t s = 0; s < n; ++s) {
      const Scratch w = scratch(a.ws, s, n);
      find_active(sample_in(a, s), w, w.counts[0], w.counts[1], a.pool, a.gate_activity);
      count(stats, w.counts[0], w.counts[1]);
    }
    int64_t reduced = 0;
    for (int64_t s = 0; s < n;) {
      int64_t e = s;
      while (e < n && takes_dense(scratch(a.ws, e, n))) ++e;
      if (e > s) {
        run_dense(a, s, e);
        s = e;
        continue;
      }
      reduced_samples(a)[reduced++] = int32_t(s++);
    }
    const int64_t slots = reduced_slots(a.in_dims);
    const int64_t side_by_side = slots > 1 && a.pool && a.pool->size() == slots ? reduced / slots * slots : 0;
    if (side_by_side > 0)
      a.pool->parallel_for(side_by_side, [&](int64_t i, int slot) {
        const int64_t s = reduced_samples(a)[i];
        run_reduced(a, s, scratch(a.ws, s, n, slot), nullptr);
      });
    for (int64_t i = side_by_side; i < reduced; ++i) {
      const int64_t s = reduced_samples(a)[i];
      run_reduced(a, s, scratch(a.ws, s, n), a.pool);
    }
    if (a.gate_stats) a.gate_stats->add(stats);
  }

 private:
  // A sample with at least this share of its kernel x channel pairs on runs densely. Per layer
  // (2 threads, each path forced on every sample; gated resnet18 and squeezenet1_1 at 0.5 and
  // 0.75, 2026-11-27 15:32, docs/BENCHMARKS.md "Indexed tiles for the reduced conv") the reduced
  // conv took about 1.05 x its share of the dense time on 7 x 7 planes (every dense path),
  // 1.25-2 x on larger planes against oneDNN's Winograd and direct kernels and the packed 1x1
  // tiles; with few steps (squeezenet1_1's first conv, 27, its expand1x1 convs, 16-64) its tiles'
  // fixed costs lead (1.0-1.2 of dense at 0.2-0.5 of the pairs). With Winograd on the reduced
  // path (resnet18 at 0.75, 18:41 the next day, "Winograd for the reduced conv"): 0.70-0.73 of
  // dense at 0.72-0.75 of the pairs on 56 x 56 planes, 0.86-1.02 at 0.65-0.75 on 28 x 28.
  static constexpr double kDenseShare = 0.7, kWinogradDenseShare = 0.65, kWinogradReducedShare = 0.8;
  static constexpr double kSmallPlaneDenseShare = 0.9, kFewStepsDenseShare = 0.4;
  static constexpr int64_t kSmallPlane = 100, kFewSteps = 64;
  double dense_share(int64_t nin) const { return winograd_for(nin) ? kWinogradReducedShare : direct_share(); }
  // Where the reduced conv runs the direct tiles.
  double direct_share() const {
    if (K_ < kFewSteps) return kFewStepsDenseShare;
    if (win_.Ho * win_.Wo < kSmallPlane) return kSmallPlaneDenseShare;
    return winograd_dense_ ? kWinogradDenseShare : kDenseShare;
  }

  struct Scratch {
    float *pooled, *rest;
    int32_t *in_idx, *out_idx;
    int32_t* counts;        // the active input channels and kernels
    float *arranged, *out;  // the reduced conv's: the arranged input and the output rows
    int32_t* kcol;          // per step k: the weight column
    const float** xrow;     // per step k: the input row
  };
  // Per sample: pooled input [C], index lists [C] and [M] and their two lengths (in whole
  // 64-byte lines); then the samples that take the reduced conv; then the rest: the dense
  // conv's workspace, or the reduced conv's parts for each sample running side by side.
  int64_t header_floats() const { return (2 * C_ + M_ + 2 + 15) / 16 * 16; }  // 64-byte lines
  int64_t lists_floats(int64_t n) const { return n * header_floats() + (n + 15) / 16 * 16; }
  int32_t* reduced_samples(const KernelArgs& a) const {
    return reinterpret_cast<int32_t*>(a.ws + a.in_dims[0][0] * header_floats());
  }
  // Samples on the reduced conv side by side, one per thread, where their parts fit in what the
  // dense conv takes at this batch: the workspace never grows for it (side by side everywhere
  // took gated squeezenet1_1's peak at batch 8 from 33.8 to 37.6 MB, the dense network's 31.4).
  int64_t reduced_slots(const std::vector<Dims>& in) const {
    const int64_t slots = in[0][0] > 1 ? std::min<int64_t>(threads_, in[0][0]) : 1;
    const uint64_t one = uint64_t(reduced_slot_floats()) * sizeof(float);
    const uint64_t dense = dense_ ? dense_->workspace_bytes(in) : 0;
    return uint64_t(slots) * one <= std::max(one, dense) ? slots : 1;
  }
  int64_t reduced_slot_floats() const { return int64_t(reduced_bytes() + 63) / 64 * 16; }
  // A Winograd conv may also take the direct tiles (winograd_for): room for both.
  int64_t arranged_floats() const {
    const int64_t direct = pointwise_ ? 0 : C_ * chan_floats_ + slack_floats();
    return wino_ ? std::max(direct, C_ * wt_.arranged_floats()) : direct;
  }
  int64_t slack_floats() const { return (win_.kw - 1) * win_.dw + 16; }
  int64_t out_floats() const {
    const int64_t direct = direct_out() ? 0 : (M_ * rows_cols() + 15) / 16 * 16;
    return wino_ ? std::max(direct, wino_slots() * wino_slot_floats()) : direct;
  }
  // The columns of the product: Ho rows of Wq (the arranged planes' width; Wo and more).
  int64_t rows_cols() const { return win_.Ho * wq_; }
  bool direct_out() const { return wq_ == win_.Wo; }
  uint64_t reduced_bytes() const {
    return uint64_t(arranged_floats() + out_floats()) * sizeof(float) +
           uint64_t(K_) * (sizeof(int32_t) + sizeof(float*)) + 64;
  }
  // Sample s's lists (of n samples) and the rest (the reduced conv's parts of `slot`).
  Scratch scratch(float* ws, int64_t s, int64_t n, int slot = 0) const {
    Scratch w;
    w.pooled = ws + s * header_floats();
    w.in_idx = reinterpret_cast<int32_t*>(w.pooled + C_);
    w.out_idx = w.in_idx + C_;
    w.counts = w.out_idx + M_;
    w.rest = ws + lists_floats(n) + slot * reduced_slot_floats();
    w.arranged = w.rest;
    w.out = w.arranged + arranged_floats();
    // The pointer table 8-byte aligned: a workspace may start at any float (UBSan saw one at
    // 4 mod 8); the 64 bytes reduced_bytes() adds cover the step.
    w.xrow = reinterpret_cast<const float**>(aligned8(w.out + out_floats()));
    w.kcol = reinterpret_cast<int32_t*>(w.xrow + K_);
    return w;
  }

  // The arranged input (arrange_input): per active channel, sh x sw phase planes of
  // hq_ x wq_ floats, phase (a, b) holding the padded input's rows a, a + sh, ... and
  // columns b, b + sw, ...; a tap then reads one phase plane shifted by a whole offset,
  // and output (oh, ow) is column oh * wq_ + ow of every step's row (the columns at
  // ow >= Wo are computed and dropped). tap_off_[t]: tap t's row from its channel's base.
  void arrange_taps() {
    const Window& v = win_;
    const int64_t hp = v.H + v.pt + v.pb, wp = v.W + v.pl + v.pr;
    hq_ = pointwise_ ? v.H : (hp + v.sh - 1) / v.sh;
    wq_ = pointwise_ ? v.W : (wp + v.sw - 1) / v.sw;
    chan_floats_ = pointwise_ ? v.H * v.W : v.sh * v.sw * hq_ * wq_;
    tap_off_.clear();
    for (int64_t i = 0; i < v.kh; ++i)
      for (int64_t j = 0; j < v.kw; ++j) {
        const int64_t ri = i * v.dh, cj = j * v.dw;
        tap_off_.push_back(((ri % v.sh) * v.sw + cj % v.sw) * hq_ * wq_ + (ri / v.sh) * wq_ + cj / v.sw);
      }
  }

  // Channel plane xc into its phase planes at dst (zeros in the padding): per row phase a,
  // the rows that lie in the input split by their columns' phases, the others zero.
  void arrange_channel(const float* xc, float* dst) const {
    const Window& v = win_;
    const int64_t plane = hq_ * wq_;
    for (int64_t a = 0; a < v.sh; ++a) {
      float* phases = dst + a * v.sw * plane;  // phase planes (a, 0), (a, 1), ... `plane` apart
      int64_t r0 = 0, r1 = hq_;                // the rows r whose input row r * sh + a - pt lies in the input
      while (r0 < hq_ && r0 * v.sh + a - v.pt < 0) ++r0;
      while (r1 > r0 && (r1 - 1) * v.sh + a - v.pt >= v.H) --r1;
      for (int64_t b = 0; b < v.sw; ++b) {
        std::memset(phases + b * plane, 0, sizeof(float) * size_t(r0 * wq_));
        std::memset(phases + b * plane + r1 * wq_, 0, sizeof(float) * size_t((hq_ - r1) * wq_));
      }
      split_columns(xc + (r0 * v.sh + a - v.pt) * v.W, r1 - r0, v.sh * v.W, v.W, v.pl, v.sw, wq_,
                    phases + r0 * wq_, wq_, plane);
    }
  }

  // The product's steps: per active channel i and tap t, the weight column (c, t) and
  // the input row (the channel's arranged planes shifted by the tap, or for a pointwise
  // conv the channel's plane itself).
  void arrange_input(const float* xs, const Scratch& w, int64_t nin, ThreadPool* pool) const {
    const int64_t plane = win_.H * win_.W;
    if (!pointwise_) {
      parallel_range(pool, nin, std::max<int64_t>(1, 16384 / chan_floats_), [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i)
          arrange_channel(xs + w.in_idx[i] * plane, w.arranged + i * chan_floats_);
      });
      // Steps read the last channel's dropped columns up to slack_floats() past its planes.
      std::memset(w.arranged + nin * chan_floats_, 0, sizeof(float) * size_t(slack_floats()));
    }
    for (int64_t i = 0; i < nin; ++i) {
      const int64_t c = w.in_idx[i];
      const float* base = pointwise_ ? xs + c * plane : w.arranged + i * chan_floats_;
      for (int64_t t = 0; t < taps_; ++t) {
        w.kcol[i * taps_ + t] = int32_t(c * taps_ + t);
        w.xrow[i * taps_ + t] = base + tap_off_[size_t(t)];
      }
    }
  }

  // The active input channels (not all zero) and, from the gate, the active kernels.
  // One pass over the input (in parallel over channels) gives both.
  // activity >= 0: the kernels on at that activity instead of the gate's (common/gate_activity.h).
  void find_active(const float* xs, const Scratch& w, int32_t& nin, int32_t& nout, ThreadPool* pool,
                   double activity) const {
    const int64_t plane = win_.H * win_.W;
    if (skip_inputs_ || has_gate_)
      parallel_range(pool, C_, std::max<int64_t>(1, 16384 / plane), [&](int64_t c0, int64_t c1) {
        for (int64_t c = c0; c < c1; ++c) {
          float sum = 0.0f;
          bool nonzero = true;
          if (has_gate_)
            plane_sums(xs + c * plane, plane, sum, nonzero);
          else  // a consumer only: stop at the first values that are not zero
            nonzero = plane_nonzero(xs + c * plane, plane);
          w.pooled[c] = sum / float(plane);
          w.in_idx[c] = !skip_inputs_ || nonzero;
        }
      });
    nin = 0;
    for (int64_t c = 0; c < C_; ++c)  // compacted in place: nin <= c
      if (!(skip_inputs_ || has_gate_) || w.in_idx[c]) w.in_idx[nin++] = int32_t(c);
    if (has_gate_ && activity < 0) {
      nout = int32_t(gate_on(w.pooled, w.out_idx, pool));
      return;
    }
    nout = 0;
    for (int64_t m = 0; m < M_; ++m)
      if (!has_gate_ || exec::on_at_activity(m, activity)) w.out_idx[nout++] = int32_t(m);
  }

  // The gate's kernels on, ascending: a large gate's kernels shared out over the threads (each
  // part's list where its kernels begin, then joined). Its weights come from beyond the caches
  // once a run: resnet18's 512 x 512 gate took about 140 us of its 7 x 7 conv on one thread.
  int64_t gate_on(const float* pooled, int32_t* on, ThreadPool* pool) const {
    constexpr int64_t kMaxParts = 64, kSharedWeights = 65536;
    const int64_t parts = pool ? std::min<int64_t>({pool->size(), kMaxParts, M_}) : 1;
    if (parts <= 1 || M_ * C_ < kSharedWeights) return gate_.kernels_on(pooled, on);
    int64_t count[kMaxParts];
    pool->parallel_for(parts, [&](int64_t p, int) {
      const int64_t k0 = M_ * p / parts;
      count[p] = gate_.kernels_on(pooled, on + k0, k0, M_ * (p + 1) / parts);
    });
    int64_t n = count[0];
    for (int64_t p = 1; p < parts; ++p) {  // n <= part p's first kernel: moves down only
      std::memmove(on + n, on + M_ * p / parts, sizeof(int32_t) * size_t(count[p]));
      n += count[p];
    }
    return n;
  }

  const float* sample_in(const KernelArgs& a, int64_t s) const { return a.in[0] + s * C_ * win_.H * win_.W; }

  void count(exec::GateStats& stats, int64_t nin, int64_t nout) const {
    stats.samples += 1;
    stats.kernels += has_gate_ ? M_ : 0;
    stats.kernels_on += has_gate_ ? nout : 0;
    stats.macs += has_gate_ ? M_ * C_ : 0;
    // Effective MACs: those of the active (kernel, channel) pairs, whichever path computes them
    // (as the Vulkan executor counts; the dense path's extra work is the kernel's choice).
    stats.macs += nout * nin * taps_ * win_.Ho * win_.Wo;
  }

  // Whether a sample (its lists found) takes the dense conv: most of its pairs on.
  bool takes_dense(const Scratch& w) const {
    const int64_t nin = w.counts[0], nout = w.counts[1];
    const bool mostly_on = double(nout) * double(nin) >= dense_share(nin) * double(M_) * double(C_);
    return dense_ && (!reduced_on_ || (dense_on_ && mostly_on));
  }

  // Sample s on the reduced conv, its work shared out over pool (nullptr: this thread alone).
  void run_reduced(const KernelArgs& a, int64_t s, const Scratch& w, ThreadPool* pool) const {
    const int64_t out_plane = win_.Ho * win_.Wo;
    const float* xs = sample_in(a, s);
    float* ys = a.out + s * M_ * out_plane;
    const int64_t nin = w.counts[0], nout = w.counts[1];
    zero_off_channels(ys, w, nout);  // the active ones are written below
    if (nout == 0) return;
    if (winograd_for(nin)) {
      run_winograd(xs, ys, w, nin, nout, pool);
      return;
    }
    arrange_input(xs, w, nin, pool);
    IndexedGemm g;
    g.w = weight_.data();
    g.ldw = K_;
    g.rows = w.out_idx;
    g.nrows = nout;
    g.kcol = w.kcol;
    g.xrow = w.xrow;
    g.nk = nin * taps_;
    g.cols = rows_cols();
    // Steps whose input columns (a tile's 64 and the taps' reach, about 2 rows of wq_ more
    // per channel) fill about 24 KB of the first-level cache.
    g.kblock = std::max<int64_t>(1, 6144 / (64 + (taps_ > 1 ? 2 * wq_ + 2 : 0))) * taps_;
    if (direct_out()) {  // straight into the active kernels' planes
      g.y = ys;
      g.yrows = w.out_idx;
      g.ldy = out_plane;
    } else {
      g.y = w.out;
      g.ldy = rows_cols();
    }
    // Each finished stretch of a row goes to its kernel's plane with the epilogue, by the
    // thread that computed it: no pass and no wait of its own.
    struct Finish {
      const GatedConvKernel* k;
      const Scratch* w;
      float* ys;
    } finish{this, &w, ys};
    // With few steps a stretch is computed in about the time its epilogue call takes: the
    // epilogue then goes over each active kernel's plane once, after the product.
    const bool plane_epilogue = direct_out() && g.nk < kFewSteps;
    g.done_ctx = &finish;
    if (!plane_epilogue)
      g.done = [](const void* ctx, int64_t r, int64_t j0, int64_t n) {
        const Finish& f = *static_cast<const Finish*>(ctx);
        f.k->finish_row(f.ys, *f.w, r, j0, n);
      };
    parallel_range(pool, indexed_gemm_items(g, isa_), 1,
                   [&](int64_t i0, int64_t i1) { indexed_gemm_run(g, isa_, i0, i1); });
    if (plane_epilogue)
      parallel_range(pool, nout, 1, [&](int64_t r0, int64_t r1) {
        for (int64_t r = r0; r < r1; ++r)
          epilogue_->apply(ys + w.out_idx[r] * out_plane, w.out_idx[r], out_plane);
      });
  }

  // Columns [j0, j0 + n) of the reduced conv's output row r (kernel out_idx[r]) are final:
  // copied to the kernel's plane where they lie in rows of wq_ (the columns at ow >= Wo
  // dropped), then the epilogue on the values they became.
  void finish_row(float* ys, const Scratch& w, int64_t r, int64_t j0, int64_t n) const {
    const int64_t m = w.out_idx[r], out_plane = win_.Ho * win_.Wo;
    float* plane = ys + m * out_plane;
    if (direct_out()) {
      epilogue_->apply(plane + j0, m, n);
      return;
    }
    const float* row = w.out + r * rows_cols();
    for (int64_t oh = j0 / wq_; oh * wq_ < j0 + n && oh < win_.Ho; ++oh) {
      const int64_t lo = std::max(j0, oh * wq_), hi = std::min(j0 + n, oh * wq_ + win_.Wo);
      if (lo >= hi) continue;
      float* dst = plane + oh * win_.Wo + (lo - oh * wq_);
      std::memcpy(dst, row + lo, sizeof(float) * size_t(hi - lo));
      epilogue_->apply(dst, m, hi - lo);
    }
  }

  // Winograd for the reduced conv of 3x3 stride-1 convs: F(4x4, 3x3) where its tiles make at least
  // two blocks of tile rows per thread (blocks of about 64 tiles, the products' column tiles;
  // planes of about 56 x 56 on two threads), the blocks in parallel, each on its own buffers;
  // else F(2x2, 3x3), on planes of kOneBlockTiles as one block whose phases are shared out in
  // turn, on larger ones in blocks. Smaller planes (14 x 14 and less) keep the direct tiles:
  // Winograd did not beat them there (resnet18's 14 x 14 and alexnet's 13 x 13 convs at 0.5:
  // 0.82-1.22 x the direct tiles' time).
  void plan_winograd() {
    const Window& v = win_;
    if (v.kh != 3 || v.kw != 3 || v.sh != 1 || v.sw != 1 || v.dh != 1 || v.dw != 1) return;
    if (switched_off("FRUGAL_CPU_GATED_WINOGRAD")) return;
    for (const int64_t m : {int64_t(4), int64_t(2)}) {
      if (m == 4 && switched_off("FRUGAL_CPU_GATED_WINOGRAD4")) continue;
      wt_ = {m, v.H, v.W, v.pt, v.pl, v.Ho, v.Wo};
      const int64_t tiles = wt_.tile_rows() * wt_.tile_cols();
      block_rows_ = std::max<int64_t>(1, 64 / wt_.tile_cols());
      if (m == 2 && tiles >= kOneBlockTiles.first && tiles <= kOneBlockTiles.second &&
          !switched_off("FRUGAL_CPU_GATED_ONE_BLOCK"))
        block_rows_ = wt_.tile_rows();
      else if (wino_blocks() < 2 * threads_)
        continue;
      wino_ = true;
      wino_u_ = winograd_kernels(wt_, weight_.data(), M_, C_);
      return;
    }
  }
  // F(2x2, 3x3) on a plane of this many tiles as one block, its phases shared out in turn
  // (resnet18's 28 x 28 convs, 196 tiles: 0.82-0.95 of the time in blocks of 56 in parallel; its
  // 14 x 14 ones, 49 tiles: 0.85-1.22 of the direct tiles', which they keep).
  static constexpr std::pair<int64_t, int64_t> kOneBlockTiles = {100, 256};
  // Winograd's products have nin steps (the direct tiles' have 9 x nin), so a tile's fixed costs
  // weigh 9 times as much: it takes at least 16 active input channels.
  static constexpr int64_t kWinogradMinChannels = 16;
  bool winograd_for(int64_t nin) const { return wino_ && nin >= kWinogradMinChannels; }
  int64_t wino_blocks() const { return (wt_.tile_rows() + block_rows_ - 1) / block_rows_; }
  int64_t wino_block_tiles() const { return block_rows_ * wt_.tile_cols(); }
  int64_t wino_slots() const { return std::min<int64_t>(threads_, wino_blocks()); }
  // Per participant: a block's transformed input [points][C][tiles], products [points][M][tiles]
  // and the products' input rows (points x C pointers).
  int64_t wino_slot_floats() const {
    // + 2: the pointer table's alignment (wino_block)
    return (wt_.points() * ((C_ + M_) * wino_block_tiles() + 32) + 2 * wt_.points() * C_ + 2 + 15) / 16 * 16;
  }

  // The reduced conv as Winograd: the active channels arranged, then the blocks of tile rows in
  // parallel, each whole on one thread and its own buffers, or the one block's phases in turn.
  void run_winograd(const float* xs, float* ys, const Scratch& w, int64_t nin, int64_t nout,
                    ThreadPool* pool) const {
    const int64_t in_plane = win_.H * win_.W, chan = wt_.arranged_floats();
    parallel_range(pool, nin, 4, [&](int64_t i0, int64_t i1) {
      for (int64_t i = i0; i < i1; ++i)
        winograd_arrange(wt_, xs + w.in_idx[i] * in_plane, w.arranged + i * chan);
    });
    if (wino_blocks() == 1) {  // its phases shared out in turn: channels, points, kernels
      const WinoBlock k = wino_block(w, nin, nout, 0, 0);
      parallel_range(pool, nin, 1, [&](int64_t i0, int64_t i1) { wino_inputs(k, w, i0, i1); });
      parallel_range(pool, wt_.points(), 1, [&](int64_t p0, int64_t p1) { wino_products(k, w, p0, p1); });
      parallel_range(pool, nout, 1, [&](int64_t r0, int64_t r1) { wino_outputs(k, w, ys, r0, r1); });
      return;
    }
    auto block = [&](int64_t b, int slot) {  // a whole block on one thread
      const WinoBlock k = wino_block(w, nin, nout, b, slot);
      wino_inputs(k, w, 0, nin);
      wino_products(k, w, 0, wt_.points());
      wino_outputs(k, w, ys, 0, nout);
    };
    if (pool && pool->size() > 1 && pool->size() <= threads_)  // slots: the workspace's, per thread
      pool->parallel_for(wino_blocks(), block);
    else
      for (int64_t b = 0; b < wino_blocks(); ++b) block(b, 0);
  }

  // Block b, tile rows [ty0, ty1), on slot's buffers: the active channels' transformed tiles V
  // [points][nin][tiles], the products Y [points][nout][tiles] and the products' input rows.
  struct WinoBlock {
    int64_t nin, nout, ty0, ty1, tiles, vstride, ystride;
    float *V, *Y;
    const float** xrow;
  };
  WinoBlock wino_block(const Scratch& w, int64_t nin, int64_t nout, int64_t b, int slot) const {
    WinoBlock k;
    k.nin = nin;
    k.nout = nout;
    k.ty0 = b * block_rows_;
    k.ty1 = std::min(wt_.tile_rows(), k.ty0 + block_rows_);
    k.tiles = (k.ty1 - k.ty0) * wt_.tile_cols();
    // Points 16 floats further apart than their data: at a multiple of 4 KB (128 channels x 56
    // tiles) the 16 points' lines fell into the same cache sets.
    k.vstride = nin * k.tiles + 16;
    k.ystride = nout * k.tiles + 16;
    k.V = w.out + slot * wino_slot_floats();
    k.Y = k.V + wt_.points() * (C_ * wino_block_tiles() + 16);
    // The pointer table 8-byte aligned by address (the workspace may start at any float).
    k.xrow = reinterpret_cast<const float**>(aligned8(k.Y + wt_.points() * (M_ * wino_block_tiles() + 16)));
    return k;
  }
  // Active channels [i0, i1): their transformed tiles.
  void wino_inputs(const WinoBlock& k, const Scratch& w, int64_t i0, int64_t i1) const {
    for (int64_t i = i0; i < i1; ++i)
      winograd_input(wt_, w.arranged + i * wt_.arranged_floats(), k.ty0, k.ty1, k.V + i * k.tiles, k.vstride);
  }
  // Points [p0, p1): their products on the indexed tiles (a step's weight column: its channel's index).
  void wino_products(const WinoBlock& k, const Scratch& w, int64_t p0, int64_t p1) const {
    for (int64_t p = p0; p < p1; ++p) {
      for (int64_t i = 0; i < k.nin; ++i) k.xrow[p * k.nin + i] = k.V + p * k.vstride + i * k.tiles;
      IndexedGemm g;
      g.w = wino_u_.data() + p * M_ * C_;
      g.ldw = C_;
      g.rows = w.out_idx;
      g.nrows = k.nout;
      g.kcol = w.in_idx;
      g.xrow = k.xrow + p * k.nin;
      g.nk = k.nin;
      g.cols = k.tiles;
      g.kblock = 96;  // 96 rows of a 64-column tile: 24 KB
      g.y = k.Y + p * k.ystride;
      g.ldy = k.tiles;
      indexed_gemm_run(g, isa_, 0, indexed_gemm_items(g, isa_));
    }
  }
  // Active kernels [r0, r1): their output tiles and epilogue.
  void wino_outputs(const WinoBlock& k, const Scratch& w, float* ys, int64_t r0, int64_t r1) const {
    const int64_t out_plane = win_.Ho * win_.Wo, h0 = wt_.m * k.ty0 * win_.Wo,
                  h1 = std::min(win_.Ho, wt_.m * k.ty1) * win_.Wo;
    for (int64_t r = r0; r < r1; ++r) {
      float* plane = ys + w.out_idx[r] * out_plane;
      winograd_output(wt_, k.Y + r * k.tiles, k.ystride, k.ty0, k.ty1, plane);
      epilogue_->apply(plane + h0, w.out_idx[r], h1 - h0);
    }
  }

  // Samples [s, e) through the dense conv in one call, then each one's off channels zeroed
  // (their indices are those not in out_idx, which is ascending).
  void run_dense(const KernelArgs& a, int64_t s, int64_t e) const {
    const int64_t n = a.in_dims[0][0], out_plane = win_.Ho * win_.Wo;
    KernelArgs d;
    d.in = {sample_in(a, s)};
    d.in_dims = a.in_dims;
    d.in_dims[0][0] = e - s;
    for (size_t i = 1; i < a.in.size(); ++i) d.in.push_back(a.in[i]);
    d.out = a.out + s * M_ * out_plane;
    d.out_dims = a.out_dims;
    d.out_dims[0] = e - s;
    d.ws = a.ws + lists_floats(n);
    d.pool = a.pool;
    dense_->run(d);
    for (int64_t i = s; i < e; ++i) {
      const Scratch w = scratch(a.ws, i, n);
      zero_off_channels(a.out + i * M_ * out_plane, w, w.counts[1]);
    }
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

  Window win_;
  PackedIsa isa_ = PackedIsa::None;  // the indexed tiles' instruction set
  int64_t C_ = 0, M_ = 0, taps_ = 1, K_ = 0;
  int64_t hq_ = 1, wq_ = 1, chan_floats_ = 1;  // the arranged input's planes (arrange_taps)
  std::vector<int64_t> tap_off_;
  int threads_ = 1;
  // Switches for comparisons (FRUGAL_CPU_GATED_DENSE=0: no sample takes the dense conv;
  // FRUGAL_CPU_GATED_REDUCED=0: every sample does; FRUGAL_CPU_GATED_WINOGRAD=0: the direct tiles;
  // FRUGAL_CPU_GATED_WINOGRAD4=0: F(2x2, 3x3) only; FRUGAL_CPU_GATED_ONE_BLOCK=0: blocks in parallel).
  bool dense_on_ = true, reduced_on_ = true;
  bool wino_ = false;  // the reduced conv as Winograd F(m x m, 3x3) (plan_winograd)
  WinogradTiles wt_;
  int64_t block_rows_ = 1;
  std::vector<float> wino_u_;  // its transformed kernels [points][M][C]
  std::vector<float> weight_;  // [M, C, kh, kw] = [M, K]
  exec::GateParams gate_;
  bool has_gate_ = false, skip_inputs_ = false, pointwise_ = false;
  bool winograd_dense_ = false;    // the dense conv runs oneDNN's Winograd kernels (prepare())
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
