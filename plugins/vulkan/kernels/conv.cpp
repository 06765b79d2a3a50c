// Conv: one group on conv.comp (a tiled implicit GEMM; 1x1 convs included),
// depthwise convs on dwconv.comp, other grouped convs on conv_direct.comp (one
// output per invocation).
//
// Conv is gating-ready: by default (conv_gated.spv, conv_direct_gated.spv)
// every sample's output kernels come from a list of active kernel indices,
// launched with one vkCmdDispatchIndirect per sample whose group count holds
// the list's length in tiles. Ungated, the list is 0..M-1 padded with M to a
// multiple of the tile's kernels and the arguments {pixel tiles, kernel tiles,
// 1} are constants in the weights buffer; gated, gate_indices.spv writes both
// on the device from the gate values, and the output is zeroed first so that
// switched-off kernels read 0. With option {"conv": "dense"} layers use the
// *_dense.spv variants instead (one plain dispatch), so the indirection's cost
// can be measured.
//
// Winograd: an ungated 3x3 stride-1 conv (one group, no dilation) may run as
// F(2x2, 3x3) or F(4x4, 3x3) instead (winograd.comp: input transform, the
// P = 16 or 36 GEMMs on conv_dense.spv with one weight set per product, output
// transform with the epilogue), its kernels transformed once at load. Its
// transforms live in the layer's workspace, one sample at a time. Which layers
// (option "winograd", choose_winograd below): those where it measured faster.
//
// Texel operands (option "conv_texel"; auto: CPU devices, docs/VULKAN.md
// "Texel operands"): ungated one-group convs run on conv_texel.comp, which
// fetches input and kernels as texels with no shared memory: 1x1 convs (C a
// multiple of 4) on conv.comp's rows, any other as a direct conv with its
// kernels k-major, Winograd products on U and V; depthwise convs on
// dwconv_texel.spv. Float32 kernels only, and only where the grid and the
// texel views fit the device's limits. Where a 1x1 or depthwise call cannot
// (an input read by quads not at a multiple of 16 bytes in the arena, gates
// set by set_gates) it runs on its usual shader. A model's gated conv runs
// there too (texel_gated_: its kernels as rows [M][C*kh*kw rounded up to 4],
// the active ones from the list; when it is also a gate consumer, k-major,
// each active kernel's weight one fetch over the listed channels), and
// so does a gate consumer that is not gated (texel_consumer_: k-major
// kernels, the channel list read).
//
// Split-K: a GEMM-shaped conv (or a Winograd conv's products) whose
// dispatch has fewer work groups than the device needs to be busy
// (TileLimits::min_groups) cuts its reduction into slices, one work group
// each, which write partial sums to the layer's workspace; splitk.spv (or the
// Winograd output transform) adds them and applies the epilogue. Gated convs
// and gate consumers split too (the split chosen for all kernels on): a gated
// conv's device-written arguments then have z = slices, its output is not
// zero-filled, and splitk.spv writes 0 for the switched-off kernels (whose
// slices wrote nothing) from the gate values.
#include "frugal/model/ops/conv.h"

#include <algorithm>
#include <cstring>

#include "common/gate_params.h"
#include "common/window.h"
#include "frugal/error.h"
#include "vk_kernel.h"

namespace frugal::vk {

using exec::Window;

namespace {

class ConvKernel : public Kernel {
 public:
  explicit ConvKernel(const KernelSpec& s) : label_(s.label()) {
    require_activation(s, 0, "input X");
    const InputInfo& x = s.inputs[0];
    exec::ConvShape c = exec::ConvShape::from_spec(s);
    weights_ = std::move(c.weights);
    win_ = c.window;
    group_ = c.group;
    C_ = c.C;
    M_ = c.M;
    Cg_ = c.Cg;
    if (!c.bias.empty()) epilogue_.add_affine(std::vector<float>(size_t(M_), 1.0f), c.bias);
    const Dims want =
        win_.spatial_rank == 2 ? Dims{x.dims[0], M_, win_.Ho, win_.Wo} : Dims{x.dims[0], M_, win_.Wo};
    if (s.output != want)
      fail(s, "output " + dims_string(s.output) + " differs from the computed " + dims_string(want));
    for (int64_t v :
         {C_, win_.H, win_.W, M_, win_.Ho * win_.Wo, C_ * win_.H * win_.W, M_ * win_.Ho * win_.Wo})
      u32(v, s, "a conv size");
    declared_dim0_ = x.dims[0];
    gemm_ = group_ == 1;
    depthwise_ = group_ > 1 && Cg_ == 1;
    kpt_ = 1;  // set with the tile at pack time (the device's limits)
    list_len_ = M_;
    if (s.gate) {
      if (s.gate->kernels != M_ || s.gate->channels != C_ || group_ != 1)
        fail(s, "its gate switches " + std::to_string(s.gate->kernels) + " kernels over " +
                    std::to_string(s.gate->channels) + " channels; the conv has " + std::to_string(M_) +
                    " kernels over " + std::to_string(C_) + " channels in " + std::to_string(group_) +
                    " group(s)");
      gate_ = std::make_unique<exec::GateParams>(*s.gate);
    }
    skip_in_ = s.zero_block > 0 && group_ == 1;  // a gate's consumer
  }

  // Per sample: a model's gate, the pooled input [C], the switches [M], the
  // active list [list_len_] and the dispatch arguments [3]; a consumer's list
  // of input channels that are not all zero [1 + C].
  // A Winograd conv: one sample's transformed input [P][C][T] and products
  // [P][M][T] (samples run one after the other through the same space).
  // A split conv: the partial sums of the call's samples [n][split(n)][M][Ho*Wo].
  uint64_t workspace_bytes(int64_t n) const override {
    if (wino_r_ > 0) return (uint64_t(wino_p() * (C_ + split_ * M_) * wino_ts_) + wino_gate_words(n)) * 4;
    return uint64_t(n * (gate_words() + (skip_in_ ? 1 + C_ : 0) + partial_words(n))) * 4;
  }
  uint32_t reduction_split() const override { return split_; }
  bool texel_operands() const override {
    return texel_ || texel_wino_ || texel_direct_ || dw_texel_ || texel_gated_ || texel_consumer_;
  }
  bool skips_off_channels() const override { return skip_in_; }
  int64_t skip_pairs() const override { return M_ * C_; }

  Epilogue* epilogue() override { return &epilogue_; }
  int64_t gate_channels() const override { return M_; }
  int64_t gate_list_length() const override { return list_len_; }
  void set_gating(const Gating* g) override {
    if (g && wino_r_ > 0)
      throw Error(label_ +
                  " runs as a Winograd conv, which cannot be gated; create the executor with "
                  "{\"winograd\": \"off\"} to set its gates");
    if (g && (texel_direct_ || texel_gated_ || texel_consumer_))
      throw Error(label_ +
                  " reads its operands as texels, with its kernels k-major, and cannot be gated; create the "
                  "executor with {\"conv_texel\": \"off\"} to set its gates");
    gating_ = g;
  }

  void pack(WeightPacker& p) override {
    p.begin_block();
    wg_ = p.workgroup_1d;
    // A gated conv or a gate consumer takes Winograd only with texel products (float32 kernels).
    const bool wino_gate_ok = p.texel && p.storage == WeightStorage::F32;
    wino_r_ = choose_winograd(p.winograd, wino_gate_ok);
    if (wino_r_ > 0 && (gate_ || skip_in_) && !wino_gated_fits(p.tiles)) wino_r_ = 0;
    f16_ = p.storage == WeightStorage::F16 && gemm_;
    texel_ = p.texel && texel_fits(p.tiles);
    texel_direct_ = p.texel && !texel_ && texel_direct_fits(p.tiles);
    texel_gated_ = p.texel && gate_ &&
                   texel_base_fits(p.tiles, skip_in_ ? C_ * win_.kh * win_.kw * wino_mp() : M_ * texel_row());
    texel_consumer_ =
        p.texel && skip_in_ && !gate_ && texel_base_fits(p.tiles, C_ * win_.kh * win_.kw * wino_mp());
    dw_texel_ = p.texel && depthwise_ && texel_views_fit(p.tiles, M_ * win_.kh * win_.kw);
    pack_kernels(p);
    weights_ = std::vector<float>();  // the device holds them now
    epilogue_.pack(p);
    // With texel operands V's and Y's rows are padded to whole texels (winograd.comp's TS).
    if (wino_r_ > 0) {
      wino_ts_ = p.texel ? (wino_tiles() + 3) / 4 * 4 : wino_tiles();  // fp16 too: the same arena
      wino_tile_ = choose_tile(wino_ts_, C_, p.tiles, wino_p());
    }
    if (gemm_) {
      const Tile t = choose_tile(win_.Ho * win_.Wo, Cg_ * win_.kh * win_.kw, p.tiles);
      nx_ = t.nx, ny_ = t.ny, bk_ = t.bk, tpq_ = t.tpq, tmq_ = t.tmq;
      kpt_ = 4 * int64_t(ny_ * tmq_);
    }
    if (texel_gated_ || wino_gated()) set_gated_tiles(texel_gated_ ? win_.Ho * win_.Wo : wino_ts_);
    list_len_ = (M_ + kpt_ - 1) / kpt_ * kpt_;
    std::vector<uint32_t> all(static_cast<size_t>(list_len_), uint32_t(M_));  // padded with M: no kernel
    for (int64_t m = 0; m < M_; ++m) all[size_t(m)] = uint32_t(m);
    index_off_ = p.add_words(all);
    const int64_t per_group = gemm_ ? 4 * int64_t(nx_ * tpq_) : int64_t(wg_);  // output pixels per work group
    groups_x_ = uint32_t((win_.Ho * win_.Wo + per_group - 1) / per_group);
    if (depthwise_) groups_x_ = uint32_t((win_.Ho * ((win_.Wo + 3) / 4) + wg_ - 1) / wg_);  // 4 outputs each
    if (texel_gated_) groups_x_ = uint32_t(texel_groups(win_.Ho * win_.Wo, texel_ty_));
    if (wino_gated()) groups_x_ = uint32_t(texel_groups(wino_ts_, texel_ty_));  // its products' x
    if (wino_r_ > 0 && (gate_ || skip_in_))
      split_ = 1;
    else if (wino_r_ > 0)
      split_ = choose_split(int64_t(wino_groups(0)) * wino_groups(1) * wino_p(), C_, p.tiles.min_groups);
    else if (gemm_)  // gated convs and gate consumers too (their split sum writes 0 for switched-off kernels)
      split_ =
          choose_split(int64_t(groups_x_) * (list_len_ / kpt_), C_ * win_.kh * win_.kw, p.tiles.min_groups);
    min_groups_ = p.tiles.min_groups;
    flat_gates_ = p.tiles.flat_gate_passes;
    if (texel_ || texel_direct_ || texel_gated_ || texel_consumer_)
      split_ = 1;  // a texel 1x1 conv's fallback (conv.comp) runs whole too
    texel_wino_ =
        p.texel && wino_r_ > 0 && !f16_ && split_ == 1 &&
        uint64_t(wino_p() * C_ * std::max(wino_ts_, wino_mp())) <= 4 * (uint64_t(p.tiles.max_texels) - 4);
    // The ungated indirect dispatch, one per split a call can take (1..split_).
    std::vector<uint32_t> args;
    for (uint32_t s = 1; s <= split_; ++s)
      args.insert(args.end(), {groups_x_, uint32_t(list_len_ / kpt_), s});
    args_off_ = p.add_words(args);
    if (gate_) {
      gate_w_off_ = p.add_floats(gate_->weights);
      gate_b_off_ = p.add_floats(gate_->bias);
      gate_->weights = gate_->bias = std::vector<float>();
    }
  }

  // The kernels at word 0 of the block: [M, Cg, kh, kw], or a Winograd conv's
  // [P][C][M rounded up to 4] (a gated one's, not a consumer, [P][M][C]), or a
  // direct texel conv's (a consumer's too) [C*kh*kw][M rounded up to 4], or a
  // gated texel conv's rows [M][C*kh*kw rounded up to 4]; as halves where
  // conv.comp reads them (WF16: option "weight_storage", one group), rows of [M][K] then padded to an even K
  // so that a pair of k is one word. Other convs keep float32.
  void pack_kernels(WeightPacker& p) {
    std::vector<float> v = wino_gated() && !skip_in_ ? wino_rows(winograd_weights())
                           : wino_r_ > 0             ? winograd_weights()
                           : texel_direct_ || texel_consumer_ || (texel_gated_ && skip_in_) ? k_major()
                           : texel_gated_ && !skip_in_                                      ? padded_rows()
                                                       : std::move(weights_);
    if (!f16_) {
      p.add_floats(v);
      return;
    }
    const int64_t K = Cg_ * win_.kh * win_.kw;
    if (wino_r_ == 0 && K % 2 != 0) {
      std::vector<float> even(size_t(M_ * (K + 1)), 0.0f);
      for (int64_t m = 0; m < M_; ++m) std::copy_n(v.begin() + m * K, K, even.begin() + m * (K + 1));
      v = std::move(even);
    }
    p.add_halves(v, label_);
  }

  void create_pipelines(Device& d, const ShaderSet& shaders) override {
    dense_ = shaders.dense_conv && !gate_;  // a model's gate needs the indirect path
    if (wino_r_ > 0) {
      create_winograd_pipelines(d, shaders);
    } else if (texel_ || texel_direct_ || texel_gated_ || texel_consumer_) {
      shaders_ = shaders;  // for conv.comp, made when a 1x1 call cannot run on texels
      create_texel_pipeline(d, shaders);
    } else if (gemm_) {
      create_gemm_pipelines(d, shaders);
    } else {
      create_direct_pipeline(d, shaders);
    }
    create_gate_pipelines(d, shaders);
  }

  // ---- texel operands (conv_texel.comp) ----
  // Its conditions: an ungated 1x1 conv without padding, one group, not a
  // gate's consumer, float32 kernels, C a multiple of 4. Its input is read by
  // quads of pixels where the stride is 1 and H*W a multiple of 4, else pixel
  // by pixel (an R32F view).
  bool texel_fits(const TileLimits& lim) const { return texel_gemm_fits(lim, M_ * C_) && texel_fits_shape(); }
  // A 1x1 conv without padding, C a multiple of 4: its [M][C] rows read by 4
  // channels a texel (the ungated 1x1 form, and a gated one's).
  bool texel_fits_shape() const {
    const bool unpadded = win_.pt == 0 && win_.pl == 0 && win_.Ho == (win_.H - 1) / win_.sh + 1 &&
                          win_.Wo == (win_.W - 1) / win_.sw + 1;
    return win_.kh == 1 && win_.kw == 1 && unpadded && C_ % 4 == 0;
  }
  // Both forms: an ungated one-group conv, not Winograd, not a gate's consumer,
  // float32 kernels, its grid and texel views within the device's limits.
  bool texel_gemm_fits(const TileLimits& lim, int64_t kernel_floats) const {
    return !gate_ && !skip_in_ && texel_base_fits(lim, kernel_floats);
  }
  // A one-group conv, not Winograd, float32 kernels, its grid and texel views within the device's limits.
  bool texel_base_fits(const TileLimits& lim, int64_t kernel_floats) const {
    return gemm_ && wino_r_ == 0 && !f16_ && texel_groups(win_.Ho * win_.Wo) <= lim.max_groups_x &&
           texel_views_fit(lim, kernel_floats);
  }
  // One sample's input (R32F: 4 bytes a texel, the smaller limit) and the
  // kernels fit a texel view of this device (maxTexelBufferElements, as low as 65536).
  bool texel_views_fit(const TileLimits& lim, int64_t kernel_floats) const {
    const uint64_t texels =
        uint64_t(std::max<uint32_t>(lim.max_texels, 4)) - 4;  // slack for the view's alignment
    return uint64_t(C_ * win_.H * win_.W) <= texels && uint64_t(kernel_floats) <= 4 * texels;
  }
  bool texel_by_quads() const { return win_.sh == 1 && win_.sw == 1 && (win_.H * win_.W) % 4 == 0; }
  // Any other such conv runs on texels as a direct conv, its kernels k-major (texel_direct_).
  bool texel_direct_fits(const TileLimits& lim) const {
    return texel_gemm_fits(lim, C_ * win_.kh * win_.kw * wino_mp());
  }
  // A gated texel conv's kernel rows: C*kh*kw rounded up to 4 floats (zeros after).
  int64_t texel_row() const { return (C_ * win_.kh * win_.kw + 3) / 4 * 4; }
  std::vector<float> padded_rows() const {
    const int64_t K = C_ * win_.kh * win_.kw, R = texel_row();
    std::vector<float> v(size_t(M_ * R), 0.0f);
    for (int64_t m = 0; m < M_; ++m) std::copy_n(weights_.begin() + m * K, K, v.begin() + m * R);
    return v;
  }
  std::vector<float> k_major() const {
    const int64_t K = C_ * win_.kh * win_.kw, MP = wino_mp();
    std::vector<float> v(size_t(K * MP), 0.0f);
    for (int64_t m = 0; m < M_; ++m)
      for (int64_t k = 0; k < K; ++k) v[size_t(k * MP + m)] = weights_[size_t(m * K + k)];
    return v;
  }
  // 8 kernels x 2 quads of pixels per invocation (4 kernels below 8): four
  // texel fetches per 64 multiply-adds, as fast as any tile measured
  // (docs/VULKAN.md, "Texel operands").
  uint32_t texel_tm() const { return M_ >= 8 ? 8 : 4; }
  static constexpr uint32_t kTexelQuads = 2;
  // Work groups of a conv_texel.comp dispatch over `pixels` per sample (or
  // weight set) and `kernel_blocks` of texel_tm() kernels (0: all M_; a gated
  // conv's x: texel_ty_, its list tiles are y).
  int64_t texel_pixel_blocks(int64_t pixels) const {
    return ((pixels + 3) / 4 + kTexelQuads - 1) / kTexelQuads;
  }
  uint64_t texel_groups(int64_t pixels, int64_t kernel_blocks = 0) const {
    if (kernel_blocks == 0) kernel_blocks = (M_ + texel_tm() - 1) / texel_tm();
    return uint64_t((texel_pixel_blocks(pixels) * kernel_blocks + wg_ - 1) / wg_);
  }
  // A gated texel conv's list tile: texel_ty_ blocks of texel_tm() kernels, as
  // many as fill a work group where the plane has few pixel blocks (a 13 x 13
  // Winograd conv's 7: one block a group ran 7 of 64 invocations), at most the whole list.
  void set_gated_tiles(int64_t pixels) {
    const int64_t blocks = texel_pixel_blocks(pixels), tm = texel_tm(), all = (M_ + tm - 1) / tm;
    texel_ty_ = 1;
    while (2 * texel_ty_ * blocks <= int64_t(wg_) && 2 * texel_ty_ <= all) texel_ty_ *= 2;
    kpt_ = tm * texel_ty_;
  }

  // texel_pipeline_: the layer's form; texel_scalar_pipeline_: a gated 1x1
  // conv's with its input by pixel (for calls whose input is not at a multiple of 16 bytes).
  void create_texel_pipeline(Device& d, const ShaderSet& shaders) {
    const bool gated_consumer = texel_gated_ && skip_in_,
               gated_rows = texel_gated_ && !gated_consumer && !texel_fits_shape();
    SpecConstants sc;
    sc.set(0, wg_).set(1, 1).set(2, 1);
    sc.set(3, uint32_t(C_)).set(4, uint32_t(win_.Ho * win_.Wo)).set(5, uint32_t(M_));
    sc.set(6, texel_tm()).set(7, kTexelQuads).set(8, texel_by_quads() ? 0u : 1u);
    sc.set(9, uint32_t(win_.H)).set(10, uint32_t(win_.W)).set(11, uint32_t(win_.Wo));
    sc.set(12, uint32_t(win_.sh)).set(13, uint32_t(win_.sw));
    if (texel_direct_ || texel_consumer_ || gated_rows ||
        gated_consumer) {  // the input by pixel through the taps
      sc.set(8, 1).set(14, gated_rows ? 0u : 1u).set(16, uint32_t(win_.kh)).set(17, uint32_t(win_.kw));
      sc.set(18, uint32_t(win_.dh))
          .set(19, uint32_t(win_.dw))
          .set_int(20, int32_t(win_.pt))
          .set_int(21, int32_t(win_.pl));
    }
    sc.set(22, texel_gated_ ? 1u : 0u).set(23, texel_consumer_ || gated_consumer ? 1u : 0u);
    sc.set(24, gated_rows ? 1u : 0u).set(25, uint32_t(texel_ty_));
    epilogue_.specialize(sc, uint32_t(M_));
    texel_pipeline_ = d.pipeline(shaders.path("conv_texel"), sc);
    if (texel_gated_ && !gated_consumer && texel_fits_shape() && texel_by_quads())
      texel_scalar_pipeline_ = d.pipeline(shaders.path("conv_texel"), sc.set(8, 1));
  }

  // A 1x1 call runs on texels unless a set_gates caller gates it or its input
  // is read by quads but not at a multiple of 16 bytes.
  bool texel_runs(const LayerIO& io) const {
    return !gating_ && (!texel_by_quads() || io.in[0].offset % 16 == 0);
  }

  // conv_texel.comp, or a depthwise conv's dwconv_texel.spv, on as many
  // samples at a time as fit a storage window (the output) and a texel view
  // (the input; pack checked that one does).
  void record_texel(Recorder& r, const LayerIO& io) const {
    const uint64_t in_sample = uint64_t(C_ * win_.H * win_.W) * 4,
                   out_sample = uint64_t(M_ * win_.Ho * win_.Wo) * 4;
    const int64_t n = count(io);
    const bool scalar = texel_direct_ || texel_consumer_ || depthwise_ || !texel_by_quads();
    const uint64_t view = r.device().max_texel_bytes(scalar) - r.device().texel_alignment();
    const int64_t g = std::min<int64_t>(samples_per_dispatch(r, io, {in_sample, out_sample}, label_),
                                        std::max<uint64_t>(1, view / in_sample));
    const int64_t kernel_floats = texel_direct_ || texel_consumer_ ? C_ * win_.kh * win_.kw * wino_mp()
                                  : depthwise_                     ? M_ * win_.kh * win_.kw
                                                                   : M_ * C_;
    const Region lists = texel_consumer_ ? record_input_lists(r, io, g, nullptr) : Region{};
    for (int64_t s0 = 0; s0 < n; s0 += g) {
      const int64_t k = std::min(g, n - s0);
      Bindings b;
      b.texel[0] = io.in[0].sub(uint64_t(s0) * in_sample, uint64_t(k) * in_sample);
      b.scalar[0] = scalar;
      b.texel[1] = io.weights.sub(0, uint64_t(kernel_floats) * 4);
      b.scalar[1] = depthwise_;
      b.slot[kO] = io.out.sub(uint64_t(s0) * out_sample, uint64_t(k) * out_sample);
      b.slot[kW] = io.weights;  // the epilogue's tables
      if (texel_consumer_) b.slot[kY] = lists.sub(uint64_t(s0 * (C_ + 1)) * 4, uint64_t(k * (C_ + 1)) * 4);
      PushConstants pc;
      pc.n = uint32_t(k);
      r.bind(texel_pipeline_, b, pc, label_);
      if (depthwise_) {
        r.note("texel operands (depthwise), 4 outputs per invocation");
        r.dispatch(groups_x_, uint32_t(M_), uint32_t(k));
        continue;
      }
      r.note(std::string("texel operands") +
             (texel_consumer_    ? " (direct, listed input channels)"
              : texel_direct_    ? " (direct)"
              : texel_by_quads() ? ""
                                 : " (input by pixel)") +
             ", " + std::to_string(texel_tm()) + " kernels x " + std::to_string(4 * kTexelQuads) +
             " pixels per invocation");
      r.dispatch(uint32_t(texel_groups(win_.Ho * win_.Wo)), 1, uint32_t(k));
    }
  }

  // A model's gated conv on conv_texel.comp: the gate (pool, switches; a
  // consumer's input lists too), the active lists and indirect arguments, the
  // output zeroed, then one dispatch per sample over its active kernels' tiles.
  void record_texel_gated(Recorder& r, const LayerIO& io) const {
    const uint64_t in_sample = uint64_t(C_ * win_.H * win_.W) * 4,
                   out_sample = uint64_t(M_ * win_.Ho * win_.Wo) * 4;
    const int64_t n = count(io);
    const bool quads = !skip_in_ && texel_fits_shape() && texel_by_quads() && io.in[0].offset % 16 == 0;
    const uint64_t view = r.device().max_texel_bytes(!quads) - r.device().texel_alignment();
    const int64_t g = std::min<int64_t>(samples_per_dispatch(r, io, {in_sample, out_sample}, label_),
                                        std::max<uint64_t>(1, view / in_sample));
    const Gating gating = record_model_gate(r, io, g);
    const Region lists = skip_in_ ? record_input_lists(r, io, g, &gating) : Region{};
    record_gate_lists(r, io, gating, n, 1);
    const VkPipeline pipeline =
        quads || texel_scalar_pipeline_ == VK_NULL_HANDLE ? texel_pipeline_ : texel_scalar_pipeline_;
    for (int64_t s0 = 0; s0 < n; s0 += g) {
      const int64_t k = std::min(g, n - s0);
      Bindings b;
      b.texel[0] = io.in[0].sub(uint64_t(s0) * in_sample, uint64_t(k) * in_sample);
      b.scalar[0] = !quads;
      b.texel[1] =
          io.weights.sub(0, uint64_t(skip_in_ ? C_ * win_.kh * win_.kw * wino_mp() : M_ * texel_row()) * 4);
      b.slot[kO] = io.out.sub(uint64_t(s0) * out_sample, uint64_t(k) * out_sample);
      b.slot[kW] = io.weights;  // the epilogue's tables
      b.slot[kU] = gating.indices.sub(uint64_t(s0 * list_len_) * 4, uint64_t(k * list_len_) * 4);
      if (skip_in_) b.slot[kY] = lists.sub(uint64_t(s0 * (C_ + 1)) * 4, uint64_t(k * (C_ + 1)) * 4);
      PushConstants pc;
      pc.n = uint32_t(k);
      r.bind(pipeline, b, pc, label_);
      const uint32_t list0 = pc.u_off;
      for (int64_t s = 0; s < k; ++s) {
        pc.s = uint32_t(s);
        pc.u_off = list0 + uint32_t(s * list_len_);
        r.push(pc);
        r.note(std::string("texel operands, gated") + (skip_in_ ? ", listed input channels" : "") +
               (quads ? "" : ", input by pixel") + ", " + std::to_string(texel_tm()) + " active kernels x " +
               std::to_string(4 * kTexelQuads) + " pixels per invocation");
        r.dispatch_indirect(gating.args.buffer, gating.args.offset + uint64_t(s0 + s) * 12);
      }
    }
  }

  // Constants 3-16 of conv.comp and conv_direct.comp: sizes, taps, strides, dilations, top/left pads.
  void set_window(SpecConstants& sc) const {
    sc.set(3, uint32_t(C_)).set(4, uint32_t(win_.H)).set(5, uint32_t(win_.W)).set(6, uint32_t(M_));
    sc.set(7, uint32_t(win_.Ho))
        .set(8, uint32_t(win_.Wo))
        .set(9, uint32_t(win_.kh))
        .set(10, uint32_t(win_.kw));
    sc.set(11, uint32_t(win_.sh))
        .set(12, uint32_t(win_.sw))
        .set(13, uint32_t(win_.dh))
        .set(14, uint32_t(win_.dw));
    sc.set_int(15, int32_t(win_.pt)).set_int(16, int32_t(win_.pl));
  }

  // conv.comp (and splitk.comp for a split reduction).
  void create_gemm_pipelines(Device& d, const ShaderSet& shaders) const {
    SpecConstants sc;
    sc.set(0, nx_).set(1, ny_).set(2, 1);
    set_window(sc);
    sc.set(17, nx_).set(18, ny_).set(19, bk_).set(20, skip_in_ ? 1u : 0u).set(21, tpq_).set(22, tmq_);
    sc.set(25, f16_ ? 1u : 0u);
    epilogue_.specialize(sc, uint32_t(M_));
    pipeline_ = d.pipeline(shaders.path(dense_ ? "conv_dense" : "conv_gated"), sc);
    if (split_ > 1) {
      SpecConstants rs;
      rs.set(0, wg_).set(1, 1).set(2, 1).set(3, uint32_t(M_)).set(4, uint32_t(win_.Ho * win_.Wo));
      epilogue_.specialize(rs, uint32_t(M_));
      splitk_pipeline_ = d.pipeline(shaders.path("splitk"), rs);
    }
  }

  void create_direct_pipeline(Device& d, const ShaderSet& shaders) {
    SpecConstants sc;
    sc.set(0, wg_).set(1, 1).set(2, 1);
    set_window(sc);
    sc.set(17, uint32_t(Cg_)).set(18, uint32_t(M_ / group_));
    sc.set(19, uint32_t(kpt_)).set(20, skip_in_ ? 1u : 0u);
    epilogue_.specialize(sc, uint32_t(M_));
    const std::string name = depthwise_ ? "dwconv" : "conv_direct";
    pipeline_ = d.pipeline(shaders.path(name + (dense_ ? "_dense" : "_gated")), sc);
    if (dw_texel_)
      texel_pipeline_ = d.pipeline(shaders.path("dwconv_texel"), sc);  // set_gates: the one above
  }

  void create_gate_pipelines(Device& d, const ShaderSet& shaders) {
    SpecConstants gs;
    gs.set(0, kGateGroup).set(1, 1).set(2, 1).set(3, uint32_t(M_)).set(4, groups_x_).set(5, uint32_t(kpt_));
    const uint32_t flat = flat_gates_ ? 1u : 0u;
    gate_pipeline_ = d.pipeline(shaders.path("gate_indices"), gs);
    if (skip_in_) {
      SpecConstants is;
      is.set(0, kGateGroup).set(1, 1).set(2, 1).set(3, uint32_t(win_.H * win_.W)).set(4, uint32_t(C_));
      is.set(5, uint32_t(M_)).set(6, flat);
      inputs_pipeline_ = d.pipeline(shaders.path("gate_inputs"), is);
    }
    if (!gate_) return;
    SpecConstants ps;
    ps.set(0, kGateGroup)
        .set(1, 1)
        .set(2, 1)
        .set(3, uint32_t(win_.H * win_.W))
        .set(4, uint32_t(C_))
        .set(5, flat);
    pool_pipeline_ = d.pipeline(shaders.path("gate_pool"), ps);
    SpecConstants ws;
    ws.set(0, kGateGroup).set(1, 1).set(2, 1).set(3, uint32_t(C_)).set(4, uint32_t(M_));
    ws.set(5, gate_w_off_).set(6, gate_b_off_).set(7, flat);
    switch_pipeline_ = d.pipeline(shaders.path("gate_switch"), ws);
  }

  void record(Recorder& r, const LayerIO& io) const override {
    if (wino_r_ > 0) return record_winograd(r, io);
    if (texel_gated_) return record_texel_gated(r, io);
    if (texel_direct_ || texel_consumer_ || (texel_ && texel_runs(io)) || (dw_texel_ && !gating_))
      return record_texel(r, io);
    if (texel_ && pipeline_ == VK_NULL_HANDLE) create_gemm_pipelines(r.device(), shaders_);
    const uint64_t in_sample = uint64_t(C_ * win_.H * win_.W) * 4,
                   out_sample = uint64_t(M_ * win_.Ho * win_.Wo) * 4;
    const int64_t n = count(io);
    const uint32_t split = split_for(n);  // gated: the device writes z = split into the arguments
    const int64_t g = samples_per_dispatch(r, io, {in_sample, out_sample, out_sample * split}, label_);
    Gating own;
    const Gating* gating = gating_;
    if (gate_)
      gating = &(own = record_model_gate(r, io, g));
    else if (gating_ && !dense_)
      gating = &(own = samples_of(*gating_, io));
    const Region inputs = skip_in_ ? record_input_lists(r, io, g, gate_ ? &own : nullptr) : Region{};
    const bool gated = gating != nullptr && !dense_;
    if (gated) record_gate_lists(r, io, *gating, n, split);
    const uint64_t part_sample = out_sample * split;
    const Region parts =
        io.ws.sub(uint64_t(n * (gate_words() + (skip_in_ ? 1 + C_ : 0))) * 4, uint64_t(n) * part_sample);
    for (int64_t s0 = 0; s0 < n; s0 += g) {
      const int64_t k = std::min(g, n - s0);
      Bindings b;
      b.slot[kX] = io.in[0].sub(uint64_t(s0) * in_sample, uint64_t(k) * in_sample);
      b.slot[kO] = split > 1 ? parts.sub(uint64_t(s0) * part_sample, uint64_t(k) * part_sample)
                             : io.out.sub(uint64_t(s0) * out_sample, uint64_t(k) * out_sample);
      b.slot[kW] = io.weights;
      if (skip_in_) b.slot[kY] = inputs.sub(uint64_t(s0 * (C_ + 1)) * 4, uint64_t(k * (C_ + 1)) * 4);
      PushConstants pc;
      pc.n = uint32_t(k);
      pc.p0 = split;
      const std::string note = "reduction " + std::to_string((reduction_length() + split - 1) / split) +
                               " per work group, split " + std::to_string(split);
      if (dense_) {
        r.bind(pipeline_, b, pc, label_);
        r.note(note);
        r.dispatch(groups_x_, uint32_t(list_len_ / kpt_), uint32_t(k) * split);
      } else {
        record_indirect(r, b, pc, io, gated ? gating : nullptr, s0, k, note);
      }
      if (split > 1)
        record_split_sum(r, b.slot[kO], io.out.sub(uint64_t(s0) * out_sample, uint64_t(k) * out_sample),
                         io.weights, k, split, gated ? gating : nullptr, s0);
    }
  }

  // Active lists and dispatch arguments (z = split) from the gate values, on
  // the device; the output zeroed (switched-off kernels read 0) unless the
  // reduction is split, whose sum writes every output.
  void record_gate_lists(Recorder& r, const LayerIO& io, const Gating& gating, int64_t n,
                         uint32_t split) const {
    if (gating.n != n)
      throw Error(label_ + ": gates were set for " + std::to_string(gating.n) + " samples, the run has " +
                  std::to_string(n));
    PushConstants pc;
    pc.n = uint32_t(n);
    uint32_t bits;
    std::memcpy(&bits, &gating.threshold, 4);
    pc.p0 = bits;
    pc.p1 = uint32_t((gating.args.offset - gating.indices.offset) / 4);
    pc.p2 = split;
    Bindings b;
    b.slot[kX] = gating.values;
    b.slot[kU] = Region{gating.indices.buffer, gating.indices.offset,
                        gating.args.offset + gating.args.bytes - gating.indices.offset};
    r.bind(gate_pipeline_, b, pc, label_ + " (gates)");
    r.dispatch_flat(uint64_t(n) * kGateGroup, kGateGroup);
    if (split <= 1) r.fill(io.out, 0);  // switched-off kernels read 0
    r.barrier();
  }

  void record_indirect(Recorder& r, Bindings& b, PushConstants& pc, const LayerIO& io, const Gating* gating,
                       int64_t s0, int64_t k, const std::string& note) const {
    const bool gated = gating != nullptr;
    if (gated)
      b.slot[kU] = gating->indices.sub(uint64_t(s0 * list_len_) * 4, uint64_t(k * list_len_) * 4);
    else
      b.slot[kU] = io.weights.sub(uint64_t(index_off_) * 4, uint64_t(list_len_) * 4);
    r.bind(pipeline_, b, pc, label_);
    const uint32_t list0 = pc.u_off;
    const uint32_t split = std::max<uint32_t>(pc.p0, 1);
    const uint32_t known[3] = {groups_x_, uint32_t(list_len_ / kpt_), split};  // the ungated arguments
    for (int64_t s = 0; s < k; ++s) {
      pc.s = uint32_t(s);
      pc.u_off = list0 + (gated ? uint32_t(s * list_len_) : 0u);
      r.push(pc);
      r.note(note);
      if (gated)
        r.dispatch_indirect(gating->args.buffer, gating->args.offset + uint64_t(s0 + s) * 12);
      else
        r.dispatch_indirect(io.weights.buffer, io.weights.offset + uint64_t(args_off_ + 3 * (split - 1)) * 4,
                            known);
    }
  }

  // The second pass of a split conv: k samples' partial sums -> out, with the
  // epilogue; gated (the call's gate values from sample s0 on): 0 for the
  // switched-off kernels, whose partial sums were not written.
  void record_split_sum(Recorder& r, const Region& parts, const Region& out, const Region& weights, int64_t k,
                        uint32_t split, const Gating* gating = nullptr, int64_t s0 = 0) const {
    r.barrier();
    Bindings b;
    b.slot[kX] = parts;
    b.slot[kO] = out;
    b.slot[kW] = weights;
    PushConstants pc;
    pc.n = uint32_t(k);
    pc.p0 = split;
    if (gating) {
      b.slot[kY] = gating->values.sub(uint64_t(s0 * M_) * 4, uint64_t(k * M_) * 4);
      pc.p1 = 1;
      std::memcpy(&pc.p2, &gating->threshold, 4);
    }
    r.bind(splitk_pipeline_, b, pc, label_ + " (split sum)");
    r.dispatch_flat(uint64_t(k * M_ * win_.Ho * win_.Wo), wg_);
  }

 private:
  // The GEMM tile: BM = 4*tmq x ny kernels x BN = 4*tpq*nx pixels. Each
  // invocation keeps 4*tmq x 4*tpq outputs in registers: 8 x 8 where the
  // layer is wide enough (four vec4 reads from shared memory per 64 FMAs),
  // 16 kernels x 4 pixels where it has at most 16 pixels and at least 128
  // kernels (five reads per 64 FMAs; 8 x 4 read six), else 4 x 4. The
  // group's extent is the smallest power of two that covers the layer (small
  // layers waste few lanes), at most 128 pixels x 64 kernels (128 kernels
  // with 16 per invocation; 128 invocations), then shrunk to the device's limits.
  struct Tile {
    uint32_t nx = 1, ny = 1, bk = 8, tpq = 1, tmq = 1;
  };
  // On a GPU (min_groups > 0) a layer whose grid is below min_groups takes
  // 4 x 4 outputs per invocation instead, where that gives more work groups
  // (up to 4x; 16 accumulators, so more groups fit a compute unit too); the
  // reduction is then split if the grid is still small. sets: dispatches
  // side by side (a Winograd conv's P products).
  Tile choose_tile(int64_t pixels, int64_t k, const TileLimits& lim, int64_t sets = 1) const {
    // At most 16 pixels (one quad per invocation along x): 16 kernels per
    // invocation where there are many, so it still keeps 64 accumulators.
    const uint32_t tmq = pixels <= 16 && M_ >= 128 ? 4 : M_ > 32 ? 2 : 1;
    Tile t = fit_tile(pixels, k, lim, pixels > 32 ? 2 : 1, tmq);
    auto groups = [&](const Tile& u) {
      const int64_t bn = 4 * u.tpq * u.nx, bm = 4 * u.tmq * u.ny;
      return sets * ((pixels + bn - 1) / bn) * ((M_ + bm - 1) / bm);
    };
    if (lim.min_groups == 0 || groups(t) >= int64_t(lim.min_groups) || (t.tpq == 1 && t.tmq == 1)) return t;
    const Tile small = fit_tile(pixels, k, lim, 1, 1);
    return groups(small) > groups(t) ? small : t;
  }
  // Reductions of at least this length take TileLimits::long_step per staged
  // step (32 on CPU devices, docs/VULKAN.md "Conv kernels"); shorter ones 8.
  static constexpr int64_t kLongReduction = 256;
  Tile fit_tile(int64_t pixels, int64_t k, const TileLimits& lim, uint32_t tpq, uint32_t tmq) const {
    auto cover = [](int64_t n, uint32_t per, uint32_t most) {
      uint32_t q = 1;
      while (q < most && int64_t(per) * q < n) q *= 2;
      return q;
    };
    Tile t;
    t.tpq = tpq;
    t.tmq = tmq;
    t.nx = cover(pixels, 4 * t.tpq, 16);
    // Half as wide where that leaves an eighth fewer pixel slots idle
    // (squeezenet1_1's classifier, 169 pixels: 256 slots in tiles of 128, 192
    // in tiles of 64). Never narrower: each tile stages the weights again
    // (resnet18's 14 x 14 convs in tiles of 16 pixels took 3x as long).
    auto slots = [&](uint32_t n) { return (pixels + 4 * t.tpq * n - 1) / (4 * t.tpq * n) * (4 * t.tpq * n); };
    if (t.nx >= 8 && slots(t.nx / 2) * 8 < slots(t.nx) * 7) t.nx /= 2;
    t.ny = cover(M_, 4 * t.tmq, 8);
    t.bk = k >= kLongReduction ? lim.long_step : 8;
    auto fits = [&] {
      return t.nx * t.ny <= lim.invocations && t.nx <= lim.size_x && t.ny <= lim.size_y &&
             (t.bk * (t.nx * t.tpq + t.ny * t.tmq) * 16 + 16 * t.ny * t.tmq) <= lim.shared_bytes;
    };
    while (!fits() && t.bk > 4) t.bk /= 2;
    while (!fits() && (t.nx > 1 || t.ny > 1)) (t.nx >= t.ny ? t.nx : t.ny) /= 2;
    return t;
  }

  // ---- split-K ----
  // Fewer work groups than min_groups (0: never split): slices of the
  // reduction (length k), at least kMinSlice long and at most kMaxSplit of
  // them, until the dispatch has about min_groups work groups.
  static constexpr int64_t kMinSlice = 64, kMaxSplit = 32;
  static uint32_t choose_split(int64_t groups, int64_t k, uint32_t min_groups) {
    if (min_groups == 0 || groups >= int64_t(min_groups)) return 1;
    const int64_t want = (int64_t(min_groups) + groups - 1) / groups;
    return uint32_t(std::max<int64_t>(1, std::min({want, k / kMinSlice, kMaxSplit})));
  }
  // Slices of a direct conv's call on n samples: a call's samples run side by
  // side, so n samples need 1/n of one sample's split to fill the device (and
  // their partial sums stay about one split sample's, whatever the batch).
  uint32_t split_for(int64_t n) const {
    if (split_ <= 1 || wino_r_ > 0) return split_;
    const int64_t groups = int64_t(groups_x_) * (list_len_ / kpt_) * std::max<int64_t>(n, 1);
    return std::min(split_, choose_split(groups, C_ * win_.kh * win_.kw, min_groups_));
  }
  int64_t partial_words(int64_t n) const {
    const uint32_t s = split_for(n);
    return s > 1 && wino_r_ == 0 ? int64_t(s) * M_ * win_.Ho * win_.Wo : 0;
  }
  int64_t reduction_length() const { return wino_r_ > 0 ? C_ : Cg_ * win_.kh * win_.kw; }

  // ---- Winograd F(R x R, 3 x 3) ----
  int64_t wino_n() const { return wino_r_ + 2; }
  int64_t wino_p() const { return wino_n() * wino_n(); }
  int64_t wino_th() const { return (win_.Ho + wino_r_ - 1) / wino_r_; }
  int64_t wino_tw() const { return (win_.Wo + wino_r_ - 1) / wino_r_; }
  int64_t wino_tiles() const { return wino_th() * wino_tw(); }
  // Work groups of its GEMMs along x (tiles) and y (kernels).
  uint32_t wino_groups(int axis) const {
    const Tile& t = wino_tile_;
    return axis == 0 ? uint32_t((wino_ts_ + 4 * t.tpq * t.nx - 1) / (4 * t.tpq * t.nx))
                     : uint32_t((M_ + 4 * t.tmq * t.ny - 1) / (4 * t.tmq * t.ny));
  }

  // A gated Winograd conv: its products on conv_texel.comp over its active
  // kernels' rows of U ([P][M][C], wino_rows), the output transform writing 0
  // for the switched-off kernels. A consumer's products read its listed
  // channels of V (U k-major as ungated); a gated consumer's both, its active
  // kernels' weights one fetch each from U k-major.
  bool wino_gated() const { return wino_r_ > 0 && gate_; }
  bool wino_gated_fits(const TileLimits& lim) const {
    const uint64_t texels = 4 * (uint64_t(std::max<uint32_t>(lim.max_texels, 4)) - 4);
    const int64_t ts = (wino_tiles() + 3) / 4 * 4, u = gate_ && !skip_in_ ? M_ * C_ : C_ * wino_mp();
    return uint64_t(wino_p() * C_ * ts) <= texels && uint64_t(wino_p() * u) <= texels &&
           texel_groups(ts) <= lim.max_groups_x;
  }
  std::vector<float> wino_rows(const std::vector<float>& k_major) const {
    const int64_t MP = wino_mp();
    std::vector<float> v(size_t(wino_p() * M_ * C_));
    for (int64_t p = 0; p < wino_p(); ++p)
      for (int64_t c = 0; c < C_; ++c)
        for (int64_t m = 0; m < M_; ++m)
          v[size_t((p * M_ + m) * C_ + c)] = k_major[size_t((p * C_ + c) * MP + m)];
    return v;
  }
  // Before V and Y: the gate's words or the consumer's lists for the call's
  // samples, and 4 words to start V at a multiple of 16 bytes.
  uint64_t wino_gate_words(int64_t n) const {
    return gate_ || skip_in_ ? uint64_t(n * (gate_words() + (skip_in_ ? 1 + C_ : 0)) + 4) : 0;
  }

  // R (2 or 4) when this layer runs as Winograd, else 0.
  // gate_ok: a gated conv (C a multiple of 4 unless also a consumer) or a gate consumer may take it
  // (its products on texels, kernels/conv.cpp's wino_gated()); else neither does.
  int choose_winograd(WinogradMode mode, bool gate_ok) const {
    const bool gating_fits = (!gate_ && !skip_in_) || (gate_ok && (!gate_ || skip_in_ || C_ % 4 == 0));
    const bool fits = gemm_ && gating_fits && win_.spatial_rank == 2 && win_.kh == 3 && win_.kw == 3 &&
                      win_.sh == 1 && win_.sw == 1 && win_.dh == 1 && win_.dw == 1;
    if (!fits || mode == WinogradMode::Off) return 0;
    if (mode == WinogradMode::F23) return 2;
    if (mode == WinogradMode::F43) return 4;
    // Auto (docs/VULKAN.md, "Winograd", for the measurements): F(4x4) on
    // outputs of at least 24 x 24 pixels, F(2x2) below, where F(4x4)'s few
    // tiles (4 on a 7 x 7 output) leave its GEMMs too narrow; layers with
    // fewer than 16 channels or kernels stay direct (not measured).
    if (C_ < 16 || M_ < 16) return 0;
    return win_.Ho * win_.Wo >= 24 * 24 ? 4 : 2;
  }

  // U[p][c][m] = (G g G^T)[p] for every kernel m and input channel c, in
  // double; k-major with M padded to a multiple of 4 by zeros (conv.comp's WKM:
  // a quad of kernels is one vec4 load).
  int64_t wino_mp() const { return (M_ + 3) / 4 * 4; }
  std::vector<float> winograd_weights() const {
    static const double g23[4][3] = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
    static const double g43[6][3] = {{1.0 / 4, 0, 0},
                                     {-1.0 / 6, -1.0 / 6, -1.0 / 6},
                                     {-1.0 / 6, 1.0 / 6, -1.0 / 6},
                                     {1.0 / 24, 1.0 / 12, 1.0 / 6},
                                     {1.0 / 24, -1.0 / 12, 1.0 / 6},
                                     {0, 0, 1}};
    const int64_t N = wino_n(), P = wino_p();
    auto G = [&](int64_t i, int64_t k) { return wino_r_ == 2 ? g23[i][k] : g43[i][k]; };
    const int64_t MP = wino_mp();
    std::vector<float> u(size_t(P * C_ * MP), 0.0f);
    for (int64_t m = 0; m < M_; ++m)
      for (int64_t c = 0; c < C_; ++c) {
        const float* g = weights_.data() + (m * C_ + c) * 9;
        double e[6][3];  // G g
        for (int64_t i = 0; i < N; ++i)
          for (int64_t l = 0; l < 3; ++l) e[i][l] = G(i, 0) * g[l] + G(i, 1) * g[3 + l] + G(i, 2) * g[6 + l];
        for (int64_t i = 0; i < N; ++i)
          for (int64_t j = 0; j < N; ++j)
            u[size_t(((i * N + j) * C_ + c) * MP + m)] =
                float(e[i][0] * G(j, 0) + e[i][1] * G(j, 1) + e[i][2] * G(j, 2));
      }
    return u;
  }

  void create_winograd_pipelines(Device& d, const ShaderSet& shaders) {
    const std::string f = wino_r_ == 2 ? "_f23" : "_f43";
    SpecConstants in;
    in.set(0, wg_).set(1, 1).set(2, 1);
    in.set(3, uint32_t(C_)).set(4, uint32_t(win_.H)).set(5, uint32_t(win_.W));
    in.set(6, uint32_t(wino_th())).set(7, uint32_t(wino_tw())).set(8, uint32_t(wino_ts_));
    in.set_int(15, int32_t(win_.pt)).set_int(16, int32_t(win_.pl));
    wino_in_pipeline_ = d.pipeline(shaders.path("winograd_in" + f), in);
    const Tile& t = wino_tile_;
    const uint32_t T = uint32_t(wino_ts_);
    SpecConstants g;  // conv.comp as a 1x1 conv over T pixels (the padded tiles), P weight sets
    g.set(0, t.nx).set(1, t.ny).set(2, 1);
    g.set(3, uint32_t(C_)).set(4, 1).set(5, T).set(6, uint32_t(M_)).set(7, 1).set(8, T);
    g.set(9, 1).set(10, 1).set(11, 1).set(12, 1).set(13, 1).set(14, 1).set_int(15, 0).set_int(16, 0);
    g.set(17, t.nx).set(18, t.ny).set(19, t.bk).set(20, 0).set(21, t.tpq).set(22, t.tmq);
    g.set(23, uint32_t(wino_p())).set(24, 1).set(25, f16_ ? 1u : 0u);  // WKM: U is [P][C][MP]
    Epilogue().specialize(g, uint32_t(M_));  // none: the output transform applies the layer's
    wino_gemm_pipeline_ = d.pipeline(shaders.path("conv_dense"), g);
    SpecConstants out;
    out.set(0, wg_).set(1, 1).set(2, 1);
    out.set(3, uint32_t(M_)).set(4, uint32_t(win_.Ho)).set(5, uint32_t(win_.Wo));
    out.set(6, uint32_t(wino_th())).set(7, uint32_t(wino_tw())).set(8, uint32_t(wino_ts_));
    epilogue_.specialize(out, uint32_t(M_));
    wino_out_pipeline_ = d.pipeline(shaders.path("winograd_out" + f), out);
    if (texel_wino_) {  // the products on texels: 1x1 convs over T pixels, P k-major weight sets
      SpecConstants x;
      x.set(0, wg_).set(1, 1).set(2, 1);
      x.set(3, uint32_t(C_)).set(4, T).set(5, uint32_t(M_)).set(6, texel_tm()).set(7, kTexelQuads);
      x.set(14, wino_gated() && !skip_in_ ? 0u : 1u)
          .set(15, uint32_t(wino_p()));  // gated: U's rows [P][M][C]
      x.set(22, wino_gated() ? 1u : 0u).set(23, skip_in_ ? 1u : 0u).set(25, uint32_t(texel_ty_));
      Epilogue().specialize(x, uint32_t(M_));
      wino_texel_pipeline_ = d.pipeline(shaders.path("conv_texel"), x);
    }
  }

  // The P GEMMs Y[p] = U[p] V[p] on conv.comp.
  void record_products(Recorder& r, const Region& V, const Region& Y, const Region& weights) const {
    Bindings b;
    b.slot[kX] = V;
    b.slot[kO] = Y;
    b.slot[kW] = weights;
    PushConstants pc;
    pc.n = uint32_t(wino_p());
    pc.p0 = split_;
    r.bind(wino_gemm_pipeline_, b, pc, label_ + " (winograd products)");
    r.note("reduction " + std::to_string((C_ + split_ - 1) / split_) + " per work group, split " +
           std::to_string(split_));
    r.dispatch(wino_groups(0), wino_groups(1), uint32_t(wino_p()) * split_);
  }
  // The same on conv_texel.comp (k-major weight sets, rows of wino_ts_ tiles);
  // a consumer's over sample s's listed channels; a gated conv's over sample
  // s's active kernels (rows of U), its arguments written on the device.
  void record_texel_products(Recorder& r, const Region& V, const Region& Y, const Region& weights,
                             const Gating* gating = nullptr, const Region& lists = {}, int64_t s = 0) const {
    Bindings b;
    b.texel[0] = V;
    b.texel[1] = weights.sub(0, uint64_t(wino_p() * C_ * (gating && !skip_in_ ? M_ : wino_mp())) * 4);
    b.slot[kO] = Y;
    b.slot[kW] = weights;
    if (skip_in_) b.slot[kY] = lists.sub(uint64_t(s * (C_ + 1)) * 4, uint64_t(C_ + 1) * 4);
    if (gating) b.slot[kU] = gating->indices.sub(uint64_t(s * list_len_) * 4, uint64_t(list_len_) * 4);
    PushConstants pc;
    pc.n = uint32_t(wino_p());
    r.bind(wino_texel_pipeline_, b, pc, label_ + " (winograd products)");
    r.note(std::string("texel operands") +
           (gating     ? ", active kernels"
            : skip_in_ ? ", listed input channels"
                       : "") +
           ", reduction " + std::to_string(C_));
    if (gating)
      r.dispatch_indirect(gating->args.buffer, gating->args.offset + uint64_t(s) * 12);
    else
      r.dispatch(uint32_t(texel_groups(wino_ts_)), 1, uint32_t(wino_p()));
  }

  // Per sample: input transform into V, the P GEMMs into Y, output transform.
  // A gated conv first computes its gates, lists and arguments for the call's
  // samples, a consumer its input lists (both before V and Y in the workspace).
  void record_winograd(Recorder& r, const LayerIO& io) const {
    const int64_t n = count(io), T = wino_tiles(), TS = wino_ts_, P = wino_p();
    const uint64_t in_sample = uint64_t(C_ * win_.H * win_.W) * 4,
                   out_sample = uint64_t(M_ * win_.Ho * win_.Wo) * 4;
    Gating gating;
    Region lists;
    if (gate_ || skip_in_) {
      const int64_t g = samples_per_dispatch(r, io, {in_sample, out_sample}, label_);
      if (gate_) gating = record_model_gate(r, io, g);
      if (skip_in_) lists = record_input_lists(r, io, g, gate_ ? &gating : nullptr);
      if (gate_) record_gate_lists(r, io, gating, n, uint32_t(P));  // z = the P weight sets
    }
    // After the gate's words and lists, V at a multiple of 16 bytes (texel views; wino_gate_words' slack).
    const uint64_t lists_end = io.ws.offset + uint64_t(n * (gate_words() + (skip_in_ ? 1 + C_ : 0))) * 4,
                   v_at = gate_ || skip_in_ ? (lists_end + 15) / 16 * 16 - io.ws.offset : 0;
    const Region V = io.ws.sub(v_at, uint64_t(P * C_ * TS) * 4),
                 Y = io.ws.sub(V.offset - io.ws.offset + V.bytes, uint64_t(P * split_ * M_ * TS) * 4);
    const bool texel = texel_wino_ && V.offset % 16 == 0;  // else conv.comp
    if ((gate_ || skip_in_) && !texel) throw Error(label_ + ": a gated Winograd conv needs texel products");
    for (int64_t s = 0; s < n; ++s) {
      if (s > 0) r.barrier();  // the previous sample's output transform has read Y
      Bindings b;
      b.slot[kX] = io.in[0].sub(uint64_t(s) * in_sample, in_sample);
      b.slot[kO] = V;
      PushConstants pc;
      pc.n = 1;
      r.bind(wino_in_pipeline_, b, pc, label_ + " (winograd input)");
      r.dispatch_flat(uint64_t(C_ * T), wg_);
      r.barrier();
      if (texel)
        record_texel_products(r, V, Y, io.weights, gate_ ? &gating : nullptr, lists, s);
      else
        record_products(r, V, Y, io.weights);
      r.barrier();
      b = Bindings{};
      b.slot[kX] = Y;
      b.slot[kO] = io.out.sub(uint64_t(s) * out_sample, out_sample);
      b.slot[kW] = io.weights;
      if (gate_) b.slot[kY] = gating.values.sub(uint64_t(s * M_) * 4, uint64_t(M_) * 4);
      pc = PushConstants{};
      pc.n = 1;
      pc.p0 = split_;
      pc.p1 = gate_ ? 1u : 0u;  // switched-off kernels write 0
      r.bind(wino_out_pipeline_, b, pc, label_ + " (winograd output)");
      r.dispatch_flat(uint64_t(M_ * T), wg_);
    }
  }

  // A gate pass over `items` planes or kernels: a work group each, or with
  // flat_gates_ an invocation each.
  void dispatch_gate_items(Recorder& r, uint64_t items) const {
    r.dispatch_flat(flat_gates_ ? items : items * kGateGroup, kGateGroup);
  }

  int64_t gate_words() const { return gate_ ? C_ + M_ + list_len_ + 3 : 0; }

  // The gates set for a whole request (set_gates), narrowed to the step's
  // samples [io.first, io.first + n): a plan may split the layer's batch.
  Gating samples_of(const Gating& all, const LayerIO& io) const {
    const int64_t n = count(io);
    if (io.first < 0 || io.first + n > all.n)
      throw Error(label_ + ": gates were set for " + std::to_string(all.n) +
                  " samples, the step runs samples " + std::to_string(io.first) + ".." +
                  std::to_string(io.first + n - 1));
    Gating g = all;
    g.values = all.values.sub(uint64_t(io.first * M_) * 4, uint64_t(n * M_) * 4);
    g.indices = all.indices.sub(uint64_t(io.first * list_len_) * 4, uint64_t(n * list_len_) * 4);
    g.args = all.args.sub(uint64_t(io.first) * 12, uint64_t(n) * 12);
    g.n = n;
    return g;
  }

  // A consumer's per-sample lists of input channels that are not all zero,
  // after the gate's words in io.ws (gate: the switches of this call, or null).
  // A gated consumer's flags come from its gate's pool (one read of the input
  // for both); the others' from a pass of their own.
  Region input_lists(const LayerIO& io) const {
    const int64_t n = count(io);
    return io.ws.sub(uint64_t(n * gate_words()) * 4, uint64_t(n * (C_ + 1)) * 4);
  }

  Region record_input_lists(Recorder& r, const LayerIO& io, int64_t g, const Gating* gate) const {
    const int64_t n = count(io);
    const uint64_t in_sample = uint64_t(C_ * win_.H * win_.W) * 4;
    const Region lists = input_lists(io);
    for (int64_t s0 = 0; s0 < n && !gate; s0 += g) {
      const int64_t k = std::min(g, n - s0);
      Bindings b;
      b.slot[kX] = io.in[0].sub(uint64_t(s0) * in_sample, uint64_t(k) * in_sample);
      b.slot[kO] = lists.sub(uint64_t(s0 * (C_ + 1)) * 4, uint64_t(k * (C_ + 1)) * 4);
      PushConstants pc;
      pc.n = uint32_t(k);
      pc.p0 = 0;
      r.bind(inputs_pipeline_, b, pc, label_ + " (input channels)");
      dispatch_gate_items(r, uint64_t(k * C_));
    }
    r.barrier();
    Bindings b;
    if (gate) b.slot[kX] = gate->values;
    b.slot[kO] = lists;
    b.slot[kU] = io.stats;
    PushConstants pc;
    pc.n = uint32_t(n);
    pc.p0 = 1;
    pc.p1 = gate ? 1u : 0u;
    pc.p2 = io.stats.empty() ? 0u : 1u;
    r.bind(inputs_pipeline_, b, pc, label_ + " (input lists)");
    r.dispatch_flat(uint64_t(n) * kGateGroup, kGateGroup);
    r.barrier();
    return lists;
  }

  // The model's gate for the call's samples (in groups of g that fit a
  // binding), into io.ws: pooled input, then switches; the lists and dispatch
  // arguments after them are left to the caller (gate_indices.spv).
  Gating record_model_gate(Recorder& r, const LayerIO& io, int64_t g) const {
    const int64_t n = count(io);
    const uint64_t in_sample = uint64_t(C_ * win_.H * win_.W) * 4;
    const Region pooled = io.ws.sub(0, uint64_t(n * C_) * 4);
    Gating gt;
    gt.values = io.ws.sub(pooled.bytes, uint64_t(n * M_) * 4);
    gt.indices = io.ws.sub(pooled.bytes + gt.values.bytes, uint64_t(n * list_len_) * 4);
    gt.args = io.ws.sub(pooled.bytes + gt.values.bytes + gt.indices.bytes, uint64_t(n) * 12);
    gt.threshold = 0.5f;  // switches are 1 or 0
    gt.n = n;
    for (int64_t s0 = 0; s0 < n; s0 += g) {
      const int64_t k = std::min(g, n - s0);
      Bindings b;
      b.slot[kX] = io.in[0].sub(uint64_t(s0) * in_sample, uint64_t(k) * in_sample);
      b.slot[kO] = pooled.sub(uint64_t(s0 * C_) * 4, uint64_t(k * C_) * 4);
      PushConstants pc;
      pc.n = uint32_t(k * C_);
      if (skip_in_) {  // the zero-plane flags of the input lists in the same pass
        b.slot[kU] = input_lists(io).sub(uint64_t(s0 * (C_ + 1)) * 4, uint64_t(k * (C_ + 1)) * 4);
        pc.p0 = 1;
      }
      r.bind(pool_pipeline_, b, pc, label_ + " (gate pool)");
      dispatch_gate_items(r, uint64_t(k * C_));
    }
    r.barrier();
    Bindings b;
    b.slot[kX] = pooled;
    b.slot[kO] = gt.values;
    b.slot[kW] = io.weights;
    b.slot[kU] = io.stats;
    PushConstants pc;
    pc.n = uint32_t(n);
    std::memcpy(&pc.p0, &gate_->threshold, 4);
    pc.p1 = gate_->strict ? 1u : 0u;
    pc.p2 = io.stats.empty() ? 0u : 1u;
    if (io.gate_activity >= 0) {  // a stated activity (time_layer): p0 holds it instead
      const float a = float(io.gate_activity);
      std::memcpy(&pc.p0, &a, 4);
      pc.p3 = 1;
    }
    r.bind(switch_pipeline_, b, pc, label_ + " (gate)");
    dispatch_gate_items(r, uint64_t(n * M_));
    r.barrier();
    return gt;
  }

  std::string label_;
  Window win_;
  int64_t group_ = 1, C_ = 0, M_ = 0, Cg_ = 0;
  bool gemm_ = true;                    // conv.comp (one group); else conv_direct.comp
  bool depthwise_ = false;              // dwconv.comp (one input channel per group)
  int64_t kpt_ = 1, list_len_ = 1;      // kernels per work-group row; active-list length (M padded to kpt_)
  uint32_t nx_ = 1, ny_ = 1, bk_ = 16;  // GEMM tile: pixel quads, kernel quads, reduction step
  uint32_t tpq_ = 1, tmq_ = 1;          // pixel and kernel quads per invocation
  std::vector<float> weights_;
  bool f16_ = false;  // its kernels stored as halves (WF16 in conv.comp)
  Epilogue epilogue_;
  uint32_t index_off_ = 0, args_off_ = 0;
  uint32_t wg_ = 64, groups_x_ = 1;
  bool dense_ = false;
  mutable VkPipeline pipeline_ = VK_NULL_HANDLE;  // a texel conv's made on first need
  VkPipeline gate_pipeline_ = VK_NULL_HANDLE;
  bool texel_ = false;           // conv_texel.comp, a 1x1 conv ([M][C] rows)
  bool texel_direct_ = false;    // conv_texel.comp, any other (k-major kernels)
  bool texel_gated_ = false;     // conv_texel.comp, a model's gated conv (kernel rows, active ones listed)
  int64_t texel_ty_ = 1;         // its list tiles per work group row (set_gated_tiles)
  bool texel_consumer_ = false;  // conv_texel.comp, an ungated gate consumer (k-major, channels listed)
  VkPipeline texel_scalar_pipeline_ = VK_NULL_HANDLE;
  bool dw_texel_ = false;  // a depthwise conv on dwconv_texel.spv
  VkPipeline texel_pipeline_ = VK_NULL_HANDLE;
  ShaderSet shaders_;  // a texel conv's, for its conv.comp pipeline
  const Gating* gating_ = nullptr;
  std::unique_ptr<exec::GateParams> gate_;  // a model's gate (its tables go to the device at pack)
  uint32_t gate_w_off_ = 0, gate_b_off_ = 0;
  VkPipeline pool_pipeline_ = VK_NULL_HANDLE, switch_pipeline_ = VK_NULL_HANDLE;
  bool skip_in_ = false;  // a gate's consumer: skips input channels that are all zero
  VkPipeline inputs_pipeline_ = VK_NULL_HANDLE;
  int64_t wino_r_ = 0;       // Winograd F(R x R, 3 x 3): R = 2 or 4; 0: not Winograd
  Tile wino_tile_;           // the tile of its GEMMs
  int64_t wino_ts_ = 0;      // tiles per row of V and Y (T, or T rounded up to 4 for texel operands)
  bool texel_wino_ = false;  // its products on conv_texel.comp
  VkPipeline wino_texel_pipeline_ = VK_NULL_HANDLE;
  uint32_t split_ = 1;       // slices of the reduction (split-K) at batch 1; 1: not split
  uint32_t min_groups_ = 0;  // TileLimits::min_groups
  bool flat_gates_ = false;  // gate passes with one invocation per item (TileLimits::flat_gate_passes)
  mutable VkPipeline splitk_pipeline_ = VK_NULL_HANDLE;
  VkPipeline wino_in_pipeline_ = VK_NULL_HANDLE, wino_gemm_pipeline_ = VK_NULL_HANDLE,
             wino_out_pipeline_ = VK_NULL_HANDLE;
};

}  // namespace

FRUGAL_VULKAN_KERNEL(Conv, ConvKernel);

}  // namespace frugal::vk
