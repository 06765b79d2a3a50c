// Conv (1-D and 2-D; groups, depthwise, strides, dilations, pads, auto_pad,
// optional bias). Three algorithms, chosen at compile time:
//   - 1x1, stride 1, no padding: sgemm straight on the input (no workspace);
//     thin ones (few channels) in chunks of output rows like im2col below, so
//     that the epilogue finds each chunk's output still in cache (they are
//     bound by memory traffic: MobileNet-v2's expansions);
//   - depthwise (one input channel per group): kernels/conv_depthwise.h (3x3
//     and 5x5 on a zero-padded copy of each input plane in the workspace);
//   - otherwise im2col + sgemm per chunk of output rows: the im2col of one
//     sample, one group and a few output rows into the arena workspace (with
//     the output block about 96K floats: both stay in L2), then an sgemm that
//     writes those columns of the output planes. sgemm on such a contiguous, cache-resident [K, cols]
//     block runs up to ~1.7x faster than on the whole [K, Ho*Wo] im2col matrix
//     of the early, large-plane layers (ResNet stem and layer1, one thread).
//     The workspace is per chunk, so ws(b) does not grow with b.
// The bias and any BatchNormalization/activation bundled after the conv run as
// the epilogue on each chunk of each output plane, right after its sgemm.
// Dense convs with a short K (stems: 3x3 on RGB) and strided 1x1 convs run the
// packed 1x1 kernel's tile (kernels/conv_1x1.h) on the im2col instead of
// sgemm or oneDNN, on AVX-512 (a strided 1x1 conv's im2col: its input subsampled).
// A fourth, oneDNN (kernels/conv_onednn.h), takes the dense convs where its
// blocked kernels win (option "conv": "auto"; see use_onednn()), or every conv
// oneDNN can run ("onednn"); "blas" keeps the three above everywhere.
#include <algorithm>
#include <cstring>
#include <memory>

#include "common/window.h"
#include "kernels/conv_1x1.h"
#include "kernels/conv_depthwise.h"
#include "kernels/conv_onednn.h"
#include "kernels/kernel_util.h"
#include "kernels/parallel_gemm.h"
#include "kernels/vector_math.h"

namespace frugal::cpu {

using exec::Window;

namespace {

class ConvKernel : public Kernel {
 public:
  explicit ConvKernel(const KernelSpec& s)
      : label_(s.label()), conv_path_(s.conv_path), winograd_(s.winograd), threads_(s.threads) {
    require_float_activation(s, 0, "input X");
    exec::ConvShape c = exec::ConvShape::from_spec(s);
    weight_ = std::move(c.weights);
    win_ = c.window;
    group_ = c.group;
    C_ = c.C;
    M_ = c.M;
    Cg_ = c.Cg;
    Mg_ = c.Mg;
    K_ = Cg_ * win_.kh * win_.kw;
    if (!c.bias.empty()) epilogue_.add_affine(std::vector<float>(size_t(M_), 1.0f), c.bias);
    const bool pointwise = win_.kh == 1 && win_.kw == 1 && win_.sh == 1 && win_.sw == 1 && win_.pt == 0 &&
                           win_.pl == 0 && win_.pb == 0 && win_.pr == 0;
    algo_ = Cg_ == 1 && group_ > 1 ? Algo::Depthwise : pointwise ? Algo::Gemm1x1 : Algo::Im2col;
    onednn_wanted_ = use_onednn(s.conv_path, pointwise);
    if (algo_ == Algo::Depthwise)  // the plain weights stay for oneDNN until prepare()
      depthwise_ = std::make_unique<DepthwiseConv>(win_, C_, M_,
                                                   onednn_wanted_ ? weight_ : std::move(weight_), threads_);
    chunk_rows_ = win_.Ho;
    // 1x1 convs: only thin ones (M + K per group <= 192, MobileNet-v2's) gain;
    // for ResNet-50's 64 <-> 256 channel 1x1s sgemm on the whole plane is up to
    // ~1.4x faster than on chunks (measured, one thread, OpenBLAS 0.3.21).
    // A strided 1x1 conv on the packed tile copies its whole subsampled input
    // once (the tile splits the columns so that they stay in L2 itself).
    if ((algo_ == Algo::Im2col && !(takes_packed_im2col() && strided_1x1_packed())) ||
        (algo_ == Algo::Gemm1x1 && Mg_ + K_ <= 192)) {
      // Chunks of whole output rows whose im2col block and output block
      // together hold about kChunkFloats (at least 128 columns: narrower GEMMs
      // lose more than the cache gains), equal in size; a plane of up to twice
      // that is one chunk.
      const int64_t target = std::max<int64_t>(128, kChunkFloats / (K_ + Mg_));
      if (win_.Ho * win_.Wo > 2 * target) {
        const int64_t rows = std::max<int64_t>(1, target / win_.Wo);
        chunks_ = (win_.Ho + rows - 1) / rows;
        chunk_rows_ = (win_.Ho + chunks_ - 1) / chunks_;
        chunks_ = (win_.Ho + chunk_rows_ - 1) / chunk_rows_;
      }
    }
  }

  // One im2col chunk buffer per thread that runs whole (sample, chunk) items:
  // min(threads, items) of them (run() uses slots below that).
  uint64_t workspace_bytes(const std::vector<Dims>& in) const override {
    if (onednn_) return onednn_->workspace_bytes(in[0][0]);
    if (depthwise_) return depthwise_->workspace_bytes(in[0][0]);
    const int64_t buffers = std::max<int64_t>(1, std::min<int64_t>(threads_, in[0][0] * chunks_));
    return uint64_t(buffers * ws_floats()) * sizeof(float);
  }

  Epilogue* epilogue() override { return &epilogue_; }

  // The packed 1x1 kernel (prepare() below) adds a residual where it stores its
  // tile; so do only convs that will take it on planes (not as rows), before any activation.
  Epilogue* residual_epilogue() override {
    for (const Epilogue::Step& s : epilogue_.steps())
      if (s.kind != Epilogue::kAffine) return nullptr;
    return (takes_packed_1x1() && !one_value_plane()) || takes_packed_im2col() ? &epilogue_ : nullptr;
  }

  // A per-sample, per-channel scale of the input (a squeeze-and-excite Mul
  // before this conv) joins convs that run the packed 1x1 kernel on planes
  // with few enough output channels (Conv1x1::takes_input_scale): the tile
  // multiplies each input row as it loads it, so the Mul's pass over the
  // tensor (and the tensor) go. The scale [n, C, 1, 1] comes as the node input
  // before any residual.
  bool join_input_scale() override {
    if (!takes_packed_1x1() || one_value_plane() || !Conv1x1::takes_input_scale(M_, packed_isa()))
      return false;
    input_scale_ = true;
    return true;
  }

  // The oneDNN primitive, now that the epilogue is complete; the plain weights
  // are dropped (held once, repacked). Where oneDNN has no implementation the
  // layer keeps its own path.
  void prepare() override {
    residual_ = epilogue_.has_residual();
    if (depthwise_) depthwise_->prepare(epilogue_);
    if (!onednn_wanted_) {
      if (takes_packed_im2col() || takes_packed_1x1()) {
        conv1x1_ = std::make_unique<Conv1x1>(M_, K_, weight_.data(), epilogue_, packed_isa());
        rows_ = algo_ == Algo::Gemm1x1 && one_value_plane();
        weight_.clear();
        weight_.shrink_to_fit();
      }
      if ((input_scale_ || residual_) && (!conv1x1_ || rows_))
        throw Error(label_ + ": " + (input_scale_ ? "a channel scale" : "a residual Add") +
                    " was joined to a conv that does not run the packed 1x1 kernel");
      return;
    }
    try {
      onednn_ = std::make_unique<OnednnConv>(win_, group_, C_, M_, weight_, epilogue_, threads_, winograd_);
    } catch (const Error&) {
      if (conv_path_ == "onednn") throw;
      return;
    }
    weight_.clear();
    weight_.shrink_to_fit();
    depthwise_.reset();
  }

  uint64_t packed_weight_bytes() const override {
    return onednn_ ? onednn_->weight_bytes() : conv1x1_ ? conv1x1_->weight_bytes() : 0;
  }

  std::string algorithm() const override {
    if (onednn_) return onednn_->algorithm();
    if (depthwise_) return depthwise_->algorithm();
    if (conv1x1_ && algo_ == Algo::Im2col) return "im2col + " + conv1x1_->algorithm();
    if (conv1x1_) return conv1x1_->algorithm() + (rows_ ? ", samples as rows" : "");
    return algo_ == Algo::Gemm1x1 ? "1x1 sgemm" : "im2col + sgemm";
  }

  void run(const KernelArgs& a) const override {
    const int64_t n = a.in_dims[0][0];
    if (onednn_) {
      onednn_->run(a.in[0], a.out, n, a.ws, a.pool);
      return;
    }
    if (depthwise_) {
      depthwise_->run(a.in[0], a.out, n, a.ws, epilogue_, a.pool);
      return;
    }
    if (rows_) {
      // y[s, m] = epilogue_m(sum_k w[m, k] x[s, k]): blocks of output channels split over the pool.
      const int64_t blocks = conv1x1_->blocks();
      int64_t parts = a.pool ? a.pool->size() : 1;
      if (2.0 * double(n) * double(M_) * double(K_) < 2e6) parts = 1;  // too small to share
      parts = std::min(parts, blocks);
      if (parts <= 1) {
        conv1x1_->run_rows(a.in[0], K_, n, a.out, M_, 0, blocks);
        return;
      }
      a.pool->parallel_for(parts, [&](int64_t p, int) {
        conv1x1_->run_rows(a.in[0], K_, n, a.out, M_, blocks * p / parts, blocks * (p + 1) / parts);
      });
      return;
    }
    const int64_t items = n * chunks_;
    if (a.pool && a.pool->size() > 1 && items > 1) {
      // Whole (sample, chunk) items per participant, each with its own slice of
      // the workspace (slot < min(threads, items), as workspace_bytes() reserves).
      a.pool->parallel_for(items, [&](int64_t it, int slot) {
        run_chunk(a, it / chunks_, it % chunks_, a.ws + slot * ws_floats(), nullptr);
      });
    } else {
      for (int64_t it = 0; it < items; ++it) run_chunk(a, it / chunks_, it % chunks_, a.ws, a.pool);
    }
  }

 private:
  enum class Algo { Gemm1x1, Im2col, Depthwise };

  // 1x1 stride-1 convs take the packed kernel with the epilogue in registers
  // (kernels/conv_1x1.h) where the CPU has AVX2 or AVX-512; "blas" keeps sgemm.
  // Planes of 2 to 7 values keep sgemm: the tile's vectors of columns would
  // be mostly empty. Planes of one value (squeeze-and-excite's 1x1 convs on
  // a pooled plane) take the same packed weights as a fully connected layer
  // (Conv1x1::run_rows: the samples are the rows): sgemm packed the
  // weights on every call, for a product of one column per sample.
  bool takes_packed_1x1() const {
    return !onednn_wanted_ && algo_ == Algo::Gemm1x1 && group_ == 1 &&
           (win_.Ho * win_.Wo >= 8 || one_value_plane()) && conv_path_ != "blas" &&
           packed_isa() != PackedIsa::None;
  }
  bool one_value_plane() const { return win_.Ho * win_.Wo == 1 && win_.H * win_.W == 1; }

  // Stems with a short K (3x3 on RGB: 27) take the AVX-512 packed tile on
  // each im2col chunk, the epilogue in registers (FRUGAL_CPU_STEM_PACKED=0
  // turns it off). oneDNN ran them from NCHW into its blocked layout, then
  // reordered the network's largest plane back. 7x7 stems (K = 147), and all
  // of them on AVX2, stay there: oneDNN was the faster (plugins/cpu/README.md).
  // Strided unpadded 1x1 convs (ResNet's downsampling ones) likewise, on a
  // subsampled copy of the input: oneDNN took them in its blocked layout, with
  // reorders, and a residual Add after them could not join them.
  bool takes_packed_im2col() const {
    if (algo_ != Algo::Im2col || group_ != 1 || conv_path_ != "auto" || packed_isa() != PackedIsa::Avx512)
      return false;
    return (K_ <= kPackedIm2colMaxK && !switched_off("FRUGAL_CPU_STEM_PACKED")) || strided_1x1_packed();
  }
  bool strided_1x1_packed() const {
    return win_.kh == 1 && win_.kw == 1 && win_.pt == 0 && win_.pl == 0 && win_.pb == 0 && win_.pr == 0 &&
           win_.H * win_.W > 1 && !switched_off("FRUGAL_CPU_STRIDED_1X1_PACKED");
  }
  static constexpr int64_t kPackedIm2colMaxK = 32;

  // "auto": oneDNN for dense convs with at least 16 output channels per group
  // that are not 1x1 stride-1 (those run sgemm on the input without workspace,
  // where oneDNN would need blocked copies of input and output; thin ones lose
  // to padding). Depthwise convs keep the direct kernel (memory-bound: the
  // layout copies would cost more than oneDNN gains).
  bool use_onednn(const std::string& path, bool pointwise) const {
    if (path == "blas" || !onednn_available()) return false;
    if (path == "onednn") return true;
    return algo_ == Algo::Im2col && Mg_ >= 16 && !pointwise && !takes_packed_im2col();
  }

  // About 384 KB of im2col and output per chunk: they stay in a core's L2
  // between im2col, sgemm and the epilogue.
  static constexpr int64_t kChunkFloats = 96 * 1024;

  int64_t ws_floats() const { return algo_ == Algo::Im2col ? K_ * chunk_rows_ * win_.Wo : 0; }

  // Output rows [chunk * chunk_rows_, ...) of sample s (all rows for 1x1 convs).
  // With a pool (one item only): the im2col rows in parallel, then blocks of
  // output channels (one sgemm and the epilogue each) in parallel.
  void run_chunk(const KernelArgs& a, int64_t s, int64_t chunk, float* ws, ThreadPool* pool) const {
    const int64_t in_plane = win_.H * win_.W, out_plane = win_.Ho * win_.Wo;
    const int64_t oh0 = chunk * chunk_rows_, oh1 = std::min(win_.Ho, oh0 + chunk_rows_);
    const int64_t col0 = oh0 * win_.Wo, cols = (oh1 - oh0) * win_.Wo;
    const float* xs = a.in[0] + s * C_ * in_plane;
    float* ys = a.out + s * M_ * out_plane + col0;
    // The residual operand (the layer's last input) is laid out as the output.
    const float* rs = residual_ ? a.in.back() + s * M_ * out_plane + col0 : nullptr;
    const float* scale = input_scale_ ? a.in[a.in.size() - (residual_ ? 2 : 1)] + s * C_ : nullptr;
    const bool im2col = algo_ == Algo::Im2col;
    if (pool && 2.0 * double(M_) * double(cols) * double(K_) < 4e6) pool = nullptr;  // too small to share
    if (conv1x1_ && im2col) {
      parallel_range(pool, K_, std::max<int64_t>(1, 16384 / cols),
                     [&](int64_t r0, int64_t r1) { im2col_rows(xs, ws, r0, r1, oh0, oh1); });
      run_packed(ws, cols, ys, out_plane, rs, nullptr, cols, pool);
      return;
    }
    if (conv1x1_) {
      run_packed(xs + col0, in_plane, ys, out_plane, rs, scale, cols, pool);
      return;
    }
    const int64_t blocks = pool ? std::min<int64_t>(Mg_, pool->size()) : 1;
    for (int64_t g = 0; g < group_; ++g) {
      const float* xg = xs + g * Cg_ * in_plane;
      if (im2col)
        parallel_range(pool, K_, std::max<int64_t>(1, 16384 / cols),
                       [&](int64_t r0, int64_t r1) { im2col_rows(xg, ws, r0, r1, oh0, oh1); });
      auto block = [&](int64_t b, int) {
        const int64_t m0 = Mg_ * b / blocks, m1 = Mg_ * (b + 1) / blocks;
        float* yg = ys + (g * Mg_ + m0) * out_plane;
        if (im2col)
          parallel_sgemm(false, false, m1 - m0, cols, K_, 1.0f, weight_.data() + (g * Mg_ + m0) * K_, K_, ws,
                         cols, 0.0f, yg, out_plane, nullptr);
        else
          parallel_sgemm(false, false, m1 - m0, cols, K_, 1.0f, weight_.data() + (g * Mg_ + m0) * K_, K_,
                         xg + col0, in_plane, 0.0f, yg, out_plane, nullptr);
        for (int64_t m = m0; m < m1; ++m) epilogue_.apply(yg + (m - m0) * out_plane, g * Mg_ + m, cols);
      };
      if (pool)
        pool->parallel_for(blocks, block);
      else
        block(0, 0);
    }
  }

  // The packed kernel on x ([K, cols], rows ldx floats apart) into y (rows ldy
  // apart), epilogue included: ranges of its channel blocks per participant.
  void run_packed(const float* x, int64_t ldx, float* y, int64_t ldy, const float* residual,
                  const float* scale, int64_t cols, ThreadPool* pool) const {
    const int64_t nb = conv1x1_->blocks(), parts = pool ? std::min<int64_t>(nb, pool->size()) : 1;
    auto part = [&](int64_t p, int) {
      conv1x1_->run(x, ldx, y, ldy, cols, nb * p / parts, nb * (p + 1) / parts, residual, scale);
    };
    if (parts > 1)
      pool->parallel_for(parts, part);
    else
      part(0, 0);
  }

  // Rows [r0, r1) of ws[(c, i, j), (oh - oh0, ow)] = x[c, oh*sh - pt + i*dh, ow*sw - pl + j*dw] for output
  // rows oh in [oh0, oh1), 0 in the padding.
  void im2col_rows(const float* x, float* ws, int64_t r0, int64_t r1, int64_t oh0, int64_t oh1) const {
    const Window& w = win_;
    const int64_t cols = (oh1 - oh0) * w.Wo;
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t c = r / (w.kh * w.kw), i = (r / w.kw) % w.kh, j = r % w.kw;
      const float* xc = x + c * w.H * w.W;
      float* dst = ws + r * cols;
      int64_t lo, hi;
      w.valid_cols(j, lo, hi);
      for (int64_t oh = oh0; oh < oh1; ++oh, dst += w.Wo) {
        const int64_t ih = oh * w.sh - w.pt + i * w.dh;
        if (ih < 0 || ih >= w.H || lo >= hi) {
          std::memset(dst, 0, sizeof(float) * size_t(w.Wo));
          continue;
        }
        const int64_t base = ih * w.W + j * w.dw - w.pl;  // xc[base + ow*sw] is column iw
        for (int64_t ow = 0; ow < lo; ++ow) dst[ow] = 0.0f;
        if (w.sw == 1)
          std::memcpy(dst + lo, xc + base + lo, sizeof(float) * size_t(hi - lo));
        else if (w.sw == 2)
          copy_stride2(dst + lo, xc + base + 2 * lo, hi - lo);
        else
          for (int64_t ow = lo; ow < hi; ++ow) dst[ow] = xc[base + ow * w.sw];
        for (int64_t ow = hi; ow < w.Wo; ++ow) dst[ow] = 0.0f;
      }
    }
  }

  std::string label_;
  std::string conv_path_;
  bool winograd_;
  bool residual_ = false;     // the epilogue adds the layer's last input (prepare())
  bool input_scale_ = false;  // the packed tile scales its input rows by a node input (join_input_scale())
  int threads_ = 1;
  Window win_;
  int64_t group_ = 1, C_ = 0, M_ = 0, Cg_ = 0, Mg_ = 0, K_ = 0;
  int64_t chunks_ = 1, chunk_rows_ = 1;  // output rows per chunk (depthwise: all rows) and chunks per plane
  std::vector<float> weight_;            // [M, Cg, kh, kw] = [M, K] row-major
  Epilogue epilogue_;
  Algo algo_ = Algo::Im2col;
  bool onednn_wanted_ = false;
  std::unique_ptr<OnednnConv> onednn_;        // set by prepare(): the layer runs on oneDNN
  std::unique_ptr<DepthwiseConv> depthwise_;  // set by prepare() for a depthwise conv not on oneDNN
  std::unique_ptr<Conv1x1> conv1x1_;          // set by prepare() for a 1x1 conv on the packed kernel
  bool rows_ = false;                         // conv1x1_ on one-value planes: run_rows, samples as rows
};

}  // namespace

FRUGAL_CPU_KERNEL(Conv, ConvKernel);

}  // namespace frugal::cpu
