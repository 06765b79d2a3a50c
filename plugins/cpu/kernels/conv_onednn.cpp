#include "kernels/conv_onednn.h"

#include "frugal/error.h"

#ifdef FRUGAL_HAVE_DNNL
#include <omp.h>

#include <cstring>
#include <dnnl.hpp>
#include <unordered_map>
#endif

namespace frugal::cpu {

#ifndef FRUGAL_HAVE_DNNL

bool onednn_available() { return false; }
struct OnednnConv::Impl {};
OnednnConv::OnednnConv(const exec::Window&, int64_t, int64_t, int64_t, const std::vector<float>&,
                       const Epilogue&, int, bool) {
  throw Error("this build has no oneDNN (libdnnl-dev)");
}
OnednnConv::~OnednnConv() = default;
uint64_t OnednnConv::workspace_bytes(int64_t) const { return 0; }
uint64_t OnednnConv::weight_bytes() const { return 0; }
std::string OnednnConv::algorithm() const { return ""; }
void OnednnConv::run(const float*, float*, int64_t, void*, ThreadPool*) const {}

#else

namespace {

using dnnl::memory;
using Tag = memory::format_tag;
constexpr auto kF32 = memory::data_type::f32;
constexpr uint64_t kAlign = 64;

uint64_t round_up(uint64_t x) { return (x + kAlign - 1) / kAlign * kAlign; }

dnnl::engine& engine() {
  static dnnl::engine e(dnnl::engine::kind::cpu, 0);
  return e;
}

// Sets OpenMP's thread count for this thread while in scope: oneDNN's parallel
// regions use it, and frugal's own pool waits meanwhile (one owns the cores).
class OmpThreads {
 public:
  explicit OmpThreads(int t) : prev_(omp_get_max_threads()) { omp_set_num_threads(t); }
  ~OmpThreads() { omp_set_num_threads(prev_); }
  OmpThreads(const OmpThreads&) = delete;
  OmpThreads& operator=(const OmpThreads&) = delete;

 private:
  int prev_;
};

// Appends activation step s as post-ops; false when oneDNN has no equivalent.
bool append_activation(const exec::EpilogueSteps::Step& s, dnnl::post_ops& po) {
  using dnnl::algorithm;
  using ops::ActivationKind;
  if (s.kind == exec::EpilogueSteps::kSwish) {  // x * sigmoid(alpha x), alpha = 1
    po.append_eltwise(1.f, algorithm::eltwise_swish, 1.f, 0.f);
    return true;
  }
  switch (ActivationKind(s.kind)) {
    case ActivationKind::Relu:
      po.append_eltwise(1.f, algorithm::eltwise_relu, 0.f, 0.f);
      return true;
    case ActivationKind::LeakyRelu:
      po.append_eltwise(1.f, algorithm::eltwise_relu, s.a, 0.f);
      return true;
    case ActivationKind::Clip:
      po.append_eltwise(1.f, algorithm::eltwise_clip, s.a, s.b);
      return true;
    case ActivationKind::Sigmoid:
      po.append_eltwise(1.f, algorithm::eltwise_logistic, 0.f, 0.f);
      return true;
    case ActivationKind::HardSigmoid:  // min(max(a x + b, 0), 1)
      po.append_eltwise(1.f, algorithm::eltwise_linear, s.a, s.b);
      po.append_eltwise(1.f, algorithm::eltwise_clip, 0.f, 1.f);
      return true;
    case ActivationKind::HardSwish:  // x * min(max(x / 6 + 1/2, 0), 1), as ONNX
      po.append_eltwise(1.f, algorithm::eltwise_hardswish, 0.f, 0.f);
      return true;
  }
  return false;
}

}  // namespace

bool onednn_available() { return true; }

// The layer as slices of its output channels (whole blocks of the blocked
// layout), each a primitive made for one thread: at batch 1 the executor's pool
// runs the slices side by side, on several samples each thread runs whole
// samples slice after slice. No OpenMP team ever runs (the pool owns the
// cores; waking a sleeping team for each layer cost more than it gained at
// batch 1), and a sample's result does not depend on the batch it runs in.
// Activations are NCHW in the arena; a slot holds one sample's blocked input and
// output ([scratchpads | blocked src | blocked dst], each at a 64-byte boundary,
// plus 64 bytes to align the start); with N = 1 a range of channel blocks is
// contiguous in nChw16c as in NCHW, so a slice's part is at an offset.
namespace {

// Channels [c0, c1) of a sample and their reorder between NCHW and the primitive's layout.
struct Part {
  int64_t c0 = 0, c1 = 0;
  memory::desc plain, blocked;
  bool reorder = false;
  dnnl::reorder prim;
};

// The layer as the constructor received it, the affine map folded in.
struct ConvLayer {
  exec::Window w;
  int64_t group, C, M;
  const std::vector<float>& weights;  // [M, C/group, kh, kw], scaled by the affine map
  const std::vector<float>& bias;     // [M]: the affine map's shift
  int threads;
};

// The primitives of one layer: its algorithm, the implementation oneDNN
// picked and the layouts around it.
struct Choice {
  dnnl::algorithm alg = dnnl::algorithm::convolution_direct;
  std::string impl;        // oneDNN's implementation for the whole layer
  bool same_impl = false;  // every slice must take `impl` (Winograd)
  memory::desc src, dst;
};

}  // namespace

struct OnednnConv::Impl {
  struct Slice {
    Part out;
    dnnl::convolution_forward conv;
    memory weights, bias;
  };
  // Output rows [o0, o1) of a sample from input rows [i0, i1) (with the
  // padding the band keeps): its NCHW rows reordered into a dense blocked band
  // at src_off of the slot's input area, the primitive into a dense blocked
  // band at dst_off of its output area, reordered back into the NCHW rows.
  struct Band {
    int64_t o0 = 0, o1 = 0, i0 = 0, i1 = 0;
    uint64_t src_off = 0, dst_off = 0;
    memory::desc plain_in, blocked_in, plain_out, blocked_out;
    dnnl::reorder in, out;
    dnnl::convolution_forward conv;
    memory weights;  // null: the first band's
  };
  int threads = 1;
  int64_t C = 0, M = 0, in_plane = 0, out_plane = 0;
  std::string impl_info, layout;
  memory::desc src_md;         // the primitives' input layout, whole
  std::vector<Part> in_parts;  // the input's reorder, in ranges of channel blocks
  std::vector<Slice> slices;
  std::vector<Band> bands;  // instead of slices: row bands (Winograd on several threads)
  memory band_weights, band_bias;
  int64_t W = 0, Wo = 0;
  memory::desc scratch_md;
  uint64_t scratch = 0, src_bytes = 0, dst_bytes = 0;
  Epilogue rest;  // the epilogue's steps oneDNN does not apply, on the host

  bool reorder_src() const { return !bands.empty() || in_parts[0].reorder; }
  bool reorder_dst() const { return !bands.empty() || slices[0].out.reorder; }
  // Slot layout with `k` scratchpads side by side.
  uint64_t src_off(int k) const { return uint64_t(k) * round_up(scratch); }
  uint64_t dst_off(int k) const { return src_off(k) + (reorder_src() ? round_up(src_bytes) : 0); }
  uint64_t slot_bytes(int k) const {
    const uint64_t end = dst_off(k) + (reorder_dst() ? dst_bytes : 0);
    return end == 0 ? 0 : end + kAlign;
  }
  // Parts or slices run side by side at batch 1, each with its own scratchpad.
  int side_by_side() const {
    return int(std::min<size_t>(size_t(threads), std::max({in_parts.size(), slices.size(), bands.size()})));
  }
  void reorder_in(const Part& p, const float* x, char* base, int k, int scratches) const;
  void run_slice(const Slice& sl, const float* x, float* y, char* base, int k, int scratches) const;
  void run_band(const Band& b, const float* x, float* y, char* base, int k, int scratches) const;
  void run_sample(const float* x, float* y, char* slot) const;
  void build(const ConvLayer& l, const Epilogue& epilogue, size_t first_step, dnnl::algorithm alg);
  void build_slices(const ConvLayer& l, const dnnl::primitive_attr& attr, const Choice& c,
                    const memory::dims& wd, int parts);
  bool build_bands(const ConvLayer& l, const dnnl::primitive_attr& attr, const Choice& c,
                   const memory::dims& wd, int parts);
};

namespace {

// nChw16c, nChw8c or nchw: the channel block of `md` (dims [1, c, h, w]); 0 for another layout.
int64_t channel_block(const memory::desc& md) {
  const memory::dims d = md.dims();
  for (const auto& [tag, block] : {std::pair{Tag::nChw16c, 16}, {Tag::nChw8c, 8}, {Tag::nchw, 1}})
    if (md == memory::desc(d, kF32, tag)) return block;
  return 0;
}

// The output plane (outputs per channel) from which one thread takes blocked layouts as well.
constexpr int64_t kBlockedMinPlane = 14 * 14;

// The output plane from which a Winograd layer whose channel slices oneDNN
// would give another kernel runs in row bands instead (Impl::build_bands). At
// batch 1 on two threads GoogLeNet's conv3 (56x56) took 1.08-1.13 ms in bands
// against 1.50-1.69 as direct slices; on 28x28 bands lost, to direct slices
// (its inception3a 3x3, 0.44 -> 0.50 ms) and to Winograd slices (ResNet-50's
// layer2 3x3s, 0.33-0.35 -> 0.40-0.53).
constexpr int64_t kBandMinPlane = 56 * 56;

std::string layout_name(const memory::desc& md) {
  const int64_t block = channel_block(md);
  return block > 1                                        ? "blocked"
         : block == 1                                     ? "nchw"
         : md == memory::desc(md.dims(), kF32, Tag::nhwc) ? "nhwc"
                                                          : "other";
}

Tag tag_of(int64_t block) { return block == 16 ? Tag::nChw16c : block == 8 ? Tag::nChw8c : Tag::nchw; }

// [0, channels) cut into at most `parts` ranges of whole blocks.
std::vector<std::pair<int64_t, int64_t> > split_blocks(int64_t channels, int64_t block, int parts) {
  const int64_t blocks = (channels + block - 1) / block, n = std::min<int64_t>(parts, blocks);
  std::vector<std::pair<int64_t, int64_t> > r;
  for (int64_t i = 0; i < n; ++i)
    r.emplace_back(std::min(channels, blocks * i / n * block),
                   std::min(channels, blocks * (i + 1) / n * block));
  return r;
}

// The reorder between two descs of the same dims; raises `scratch` to its scratchpad.
dnnl::reorder make_reorder(const memory::desc& from, const memory::desc& to, uint64_t& scratch) {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  const dnnl::reorder::primitive_desc r(engine(), from, engine(), to, attr);
  scratch = std::max<uint64_t>(scratch, r.scratchpad_desc().get_size());
  return dnnl::reorder(r);
}

// Channels [c0, c1) of a [1, C, h, w] tensor in layout `blocked` (its dims [1, c1 - c0, h, w])
// and the reorder from NCHW to it (to_blocked) or back; raises `scratch` to the reorder's.
Part make_part(int64_t c0, int64_t c1, const memory::desc& blocked, bool to_blocked, uint64_t& scratch) {
  Part p;
  p.c0 = c0;
  p.c1 = c1;
  const memory::dims d = blocked.dims();
  p.plain = memory::desc(d, kF32, Tag::nchw);
  p.blocked = blocked;
  p.reorder = p.plain != p.blocked;
  if (!p.reorder) return p;
  p.prim = to_blocked ? make_reorder(p.plain, p.blocked, scratch) : make_reorder(p.blocked, p.plain, scratch);
  return p;
}

// Output channels [m0, m1) of the plain weights `wt` (dims `wd` of the whole layer:
// [M, C, kh, kw], or [g, M/g, C/g, kh, kw] taken whole) in layout `md`.
memory pack_weights(const std::vector<float>& wt, int64_t m0, int64_t m1, memory::dims wd,
                    const memory::desc& md) {
  const bool grouped = wd.size() == 5;
  const int64_t per_out = int64_t(wt.size()) / (grouped ? wd[0] * wd[1] : wd[0]);
  if (!grouped) wd[0] = m1 - m0;
  memory packed(md, engine());
  memory plain(memory::desc(wd, kF32, grouped ? Tag::goihw : Tag::oihw), engine(),
               const_cast<float*>(wt.data() + m0 * per_out));
  dnnl::stream strm(engine());
  dnnl::reorder(plain, packed).execute(strm, plain, packed);
  strm.wait();
  return packed;
}

memory pack_bias(const std::vector<float>& b, int64_t m0, int64_t m1) {
  const memory::desc md({m1 - m0}, kF32, Tag::x);
  memory packed(md, engine());
  std::memcpy(packed.get_data_handle(), b.data() + m0, size_t(m1 - m0) * sizeof(float));
  return packed;
}

char* aligned(char* p) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  return reinterpret_cast<char*>((a + kAlign - 1) / kAlign * kAlign);
}

// The primitive's attributes: user scratchpad, and the epilogue's activations
// after its leading affine map as post-ops; the steps oneDNN does not take go
// to `rest` (run on the host).
dnnl::primitive_attr make_attr(const Epilogue& epilogue, size_t first, Epilogue& rest) {
  const auto& steps = epilogue.steps();
  dnnl::post_ops po;
  size_t next = first;
  for (; next < steps.size() && steps[next].kind != exec::EpilogueSteps::kAffine; ++next)
    if (!append_activation(steps[next], po)) break;
  for (; next < steps.size(); ++next) {
    if (steps[next].kind == exec::EpilogueSteps::kAffine)
      rest.add_affine(steps[next].scale, steps[next].shift);
    else
      rest.add_activation(ops::ActivationKind(steps[next].kind), steps[next].a, steps[next].b);
  }
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  attr.set_post_ops(po);
  return attr;
}

bool is_reference(const std::string& impl) { return impl.rfind("ref", 0) == 0; }

// Winograd applies to 3x3 stride-1 undilated convs of one group.
bool winograd_shape(const exec::Window& w, int64_t group) {
  return group == 1 && w.kh == 3 && w.kw == 3 && w.sh == 1 && w.sw == 1 && w.dh == 1 && w.dw == 1;
}

dnnl::convolution_forward::primitive_desc make_pd(const ConvLayer& l, const dnnl::primitive_attr& attr,
                                                  const Choice& c, const memory::desc& src, int64_t m0,
                                                  int64_t m1, const memory::desc& dst);
Choice choose(const ConvLayer& l, const dnnl::primitive_attr& attr, dnnl::algorithm alg);

}  // namespace

OnednnConv::OnednnConv(const exec::Window& w, int64_t group, int64_t C, int64_t M,
                       const std::vector<float>& weights, const Epilogue& epilogue, int threads,
                       bool winograd)
    : impl_(std::make_unique<Impl>()) {
  const OmpThreads omp(1);  // every primitive is made for one thread, and runs on one
  // The leading affine map (bias, BN) folded into the weights and bias.
  const int64_t per_out = int64_t(weights.size()) / M;
  std::vector<float> wt = weights, b(size_t(M), 0.0f);
  const auto& steps = epilogue.steps();
  const bool affine = !steps.empty() && steps[0].kind == exec::EpilogueSteps::kAffine;
  if (affine) {
    for (int64_t m = 0; m < M; ++m) {
      for (int64_t i = 0; i < per_out; ++i) wt[size_t(m * per_out + i)] *= steps[0].scale[size_t(m)];
      b[size_t(m)] = steps[0].shift[size_t(m)];
    }
  }
  const ConvLayer layer{w, group, C, M, wt, b, threads};
  if (winograd && winograd_shape(w, group)) {
    try {  // oneDNN has Winograd kernels on some instruction sets only (AVX-512)
      impl_->build(layer, epilogue, affine ? 1 : 0, dnnl::algorithm::convolution_winograd);
      return;
    } catch (const dnnl::error&) {
    } catch (const Error&) {
    }
    impl_ = std::make_unique<Impl>();
  }
  try {
    impl_->build(layer, epilogue, affine ? 1 : 0, dnnl::algorithm::convolution_direct);
  } catch (const dnnl::error& e) {
    throw Error(std::string("oneDNN has no convolution for this layer: ") + e.what());
  }
}

// The whole layer's primitive with the layouts oneDNN picks (format_tag::any).
// Throws frugal::Error for Winograd when oneDNN has only its reference kernel
// or no blocked layout.
namespace {

Choice choose(const ConvLayer& l, const dnnl::primitive_attr& attr, dnnl::algorithm alg) {
  const exec::Window& w = l.w;
  Choice c;
  c.alg = alg;
  const memory::dims xd = {1, l.C, w.H, w.W}, yd = {1, l.M, w.Ho, w.Wo};
  const auto pd =
      make_pd(l, attr, c, memory::desc(xd, kF32, Tag::any), 0, l.M, memory::desc(yd, kF32, Tag::any));
  c.src = pd.src_desc();
  c.dst = pd.dst_desc();
  if (alg == dnnl::algorithm::convolution_winograd) {
    // oneDNN's first: F(2x2, 3x3) where offered (its scratchpad is far
    // smaller than F(4x4, 3x3)'s), else F(4x4, 3x3).
    // Not iterated further: oneDNN 2.6 crashed at times stepping past them.
    c.impl = pd.impl_info_str();
    c.same_impl = true;
    if (is_reference(c.impl) || channel_block(c.src) <= 1 || channel_block(c.dst) <= 1)
      throw Error("oneDNN has no Winograd kernel for this layer");
    return c;
  }
  c.impl = pd.impl_info_str();
  // Channels last (brgconv's choice) cannot be cut into channel slices: then
  // blocked channels, where oneDNN has a kernel for them. On one thread too
  // where the output plane is at least 14x14: there the NCHW <-> channels-last
  // transposes around brgconv cost more than its kernel gains over jit's on
  // nChw16c (stems 10-30% faster blocked, GoogLeNet's conv3 10%, ResNet-50's
  // strided 1x1s up to a third; its 7x7 layers 5-10% slower; docs/BENCHMARKS.md).
  if ((l.threads > 1 || w.Ho * w.Wo >= kBlockedMinPlane) && l.group == 1 &&
      (channel_block(c.src) == 0 || channel_block(c.dst) == 0)) {
    for (const Tag tag : {Tag::nChw16c, Tag::nChw8c})
      for (const Tag src_tag : {tag, Tag::nchw}) {
        try {
          const auto bp =
              make_pd(l, attr, c, memory::desc(xd, kF32, src_tag), 0, l.M, memory::desc(yd, kF32, tag));
          if (is_reference(bp.impl_info_str())) continue;  // the reference kernels: far slower
          c.impl = bp.impl_info_str();
          c.src = bp.src_desc();
          c.dst = bp.dst_desc();
          return c;
        } catch (const dnnl::error&) {
        }
      }
  }
  return c;
}

// The primitive for output channels [m0, m1) of the layer (all of them when
// grouped) with algorithm `c.alg`: oneDNN's first implementation, which must be
// `c.impl` where `c.same_impl` (Winograd: the slices take the same kernel).
dnnl::convolution_forward::primitive_desc make_pd(const ConvLayer& l, const dnnl::primitive_attr& attr,
                                                  const Choice& c, const memory::desc& src, int64_t m0,
                                                  int64_t m1, const memory::desc& dst) {
  const exec::Window& w = l.w;
  memory::dims sw = l.group == 1 ? memory::dims{m1 - m0, l.C, w.kh, w.kw}
                                 : memory::dims{l.group, l.M / l.group, l.C / l.group, w.kh, w.kw};
  const dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_inference, c.alg, src,
                                             memory::desc(sw, kF32, Tag::any),
                                             memory::desc({m1 - m0}, kF32, Tag::x), dst, {w.sh, w.sw},
                                             {w.dh - 1, w.dw - 1}, {w.pt, w.pl}, {w.pb, w.pr});
  dnnl::convolution_forward::primitive_desc pd(desc, attr, engine());
  if (c.same_impl && c.impl != pd.impl_info_str())
    throw Error("oneDNN offers " + std::string(pd.impl_info_str()) + " instead of " + c.impl +
                " for a slice of this layer");
  return pd;
}

}  // namespace

// The layer with algorithm `alg`: layouts, the input's reorder parts, one
// primitive and weights per slice, the workspace slot's sizes.
void OnednnConv::Impl::build(const ConvLayer& l, const Epilogue& epilogue, size_t first_step,
                             dnnl::algorithm alg) {
  Impl& d = *this;
  const exec::Window& w = l.w;
  d.threads = l.threads;
  d.C = l.C;
  d.M = l.M;
  d.in_plane = w.H * w.W;
  d.out_plane = w.Ho * w.Wo;
  const dnnl::primitive_attr attr = make_attr(epilogue, first_step, d.rest);
  const Choice c = choose(l, attr, alg);
  d.impl_info = c.impl;
  d.src_md = c.src;
  d.layout = layout_name(c.src) + " -> " + layout_name(c.dst);
  d.src_bytes = c.src.get_size();
  const memory::dims wd = l.group == 1 ? memory::dims{l.M, l.C, w.kh, w.kw}
                                       : memory::dims{l.group, l.M / l.group, l.C / l.group, w.kh, w.kw};
  // Slices need a layout whose channel blocks are contiguous, and one group.
  const int64_t in_block = channel_block(c.src), out_block = channel_block(c.dst);
  const int parts = l.threads > 1 && l.group == 1 && in_block > 0 && out_block > 0 ? l.threads : 1;
  try {
    build_slices(l, attr, c, wd, parts);
  } catch (const Error&) {
    // Winograd slices that oneDNN gives another kernel: row bands on large planes.
    if (!(parts > 1 && c.same_impl && w.Ho * w.Wo >= kBandMinPlane)) throw;
    in_parts.clear();
    slices.clear();
    scratch = dst_bytes = 0;
    if (!build_bands(l, attr, c, wd, parts)) throw;
  }
}

// The input's reorder in channel parts and the output's slices (parts > 1:
// ranges of whole channel blocks), one primitive and weights per slice.
void OnednnConv::Impl::build_slices(const ConvLayer& l, const dnnl::primitive_attr& attr, const Choice& c,
                                    const memory::dims& wd, int parts) {
  Impl& d = *this;
  const exec::Window& w = l.w;
  const int64_t in_block = channel_block(c.src), out_block = channel_block(c.dst);
  if (parts == 1) {
    d.in_parts.push_back(make_part(0, l.C, c.src, true, d.scratch));
  } else {
    for (const auto& [c0, c1] : split_blocks(l.C, in_block, parts))
      d.in_parts.push_back(
          make_part(c0, c1, memory::desc({1, c1 - c0, w.H, w.W}, kF32, tag_of(in_block)), true, d.scratch));
  }
  const auto ranges =
      parts == 1 ? std::vector<std::pair<int64_t, int64_t> >{{0, l.M}} : split_blocks(l.M, out_block, parts);
  for (const auto& [m0, m1] : ranges) {
    const memory::desc out_md =
        parts == 1 ? c.dst : memory::desc({1, m1 - m0, w.Ho, w.Wo}, kF32, tag_of(out_block));
    Impl::Slice sl;
    sl.out = make_part(m0, m1, out_md, false, d.scratch);
    const auto pd = make_pd(l, attr, c, c.src, m0, m1, out_md);
    sl.conv = dnnl::convolution_forward(pd);
    d.scratch = std::max<uint64_t>(d.scratch, pd.scratchpad_desc().get_size());
    sl.weights = pack_weights(l.weights, m0, m1, wd, pd.weights_desc());
    sl.bias = pack_bias(l.bias, m0, m1);
    d.dst_bytes += round_up(out_md.get_size());
    d.slices.push_back(std::move(sl));
  }
  if (d.scratch) d.scratch_md = memory::desc({int64_t(d.scratch)}, memory::data_type::u8, Tag::x);
}

// Winograd on several threads where oneDNN gives the channel slices another
// kernel (kBandMinPlane): the output rows cut into `parts` bands, each its own
// primitive on its rows' input (the halo rows and the padding it keeps),
// through dense blocked copies in the slot. False, with nothing kept, where
// oneDNN offers a band another kernel than the layer's.
bool OnednnConv::Impl::build_bands(const ConvLayer& l, const dnnl::primitive_attr& attr, const Choice& c,
                                   const memory::dims& wd, int parts) {
  const exec::Window& w = l.w;
  parts = int(std::min<int64_t>(parts, w.Ho));
  if (parts < 2) return false;
  const Tag in_tag = tag_of(channel_block(c.src)), out_tag = tag_of(channel_block(c.dst));
  const int64_t span = (w.kh - 1) * w.dh + 1;
  std::vector<Band> made;
  memory first_weights;
  uint64_t most_scratch = scratch, src_total = 0, dst_total = 0;
  try {
    for (int i = 0; i < parts; ++i) {
      Band b;
      b.o0 = w.Ho * i / parts;
      b.o1 = w.Ho * (i + 1) / parts;
      const int64_t top = b.o0 * w.sh - w.pt, bottom = (b.o1 - 1) * w.sh - w.pt + span;
      b.i0 = std::max<int64_t>(0, top);
      b.i1 = std::min<int64_t>(w.H, bottom);
      exec::Window bw = w;
      bw.H = b.i1 - b.i0;
      bw.Ho = b.o1 - b.o0;
      bw.pt = b.i0 - top;
      bw.pb = bottom - b.i1;
      const memory::dims xd = {1, l.C, bw.H, w.W}, yd = {1, l.M, bw.Ho, w.Wo};
      b.blocked_in = memory::desc(xd, kF32, in_tag);
      b.blocked_out = memory::desc(yd, kF32, out_tag);
      b.plain_in = memory::desc(xd, kF32, memory::dims{l.C * w.H * w.W, w.H * w.W, w.W, 1});
      b.plain_out = memory::desc(yd, kF32, memory::dims{l.M * w.Ho * w.Wo, w.Ho * w.Wo, w.Wo, 1});
      b.in = make_reorder(b.plain_in, b.blocked_in, most_scratch);
      b.out = make_reorder(b.blocked_out, b.plain_out, most_scratch);
      const ConvLayer band{bw, l.group, l.C, l.M, l.weights, l.bias, l.threads};
      const auto pd = make_pd(band, attr, c, b.blocked_in, 0, l.M, b.blocked_out);
      b.conv = dnnl::convolution_forward(pd);
      most_scratch = std::max<uint64_t>(most_scratch, pd.scratchpad_desc().get_size());
      if (made.empty())
        first_weights = pack_weights(l.weights, 0, l.M, wd, pd.weights_desc());
      else if (pd.weights_desc() != first_weights.get_desc())
        b.weights = pack_weights(l.weights, 0, l.M, wd, pd.weights_desc());
      b.src_off = src_total;
      src_total += round_up(b.blocked_in.get_size());
      b.dst_off = dst_total;
      dst_total += round_up(b.blocked_out.get_size());
      made.push_back(std::move(b));
    }
  } catch (const dnnl::error&) {
    return false;
  } catch (const Error&) {
    return false;
  }
  bands = std::move(made);
  band_weights = first_weights;
  band_bias = pack_bias(l.bias, 0, l.M);
  scratch = most_scratch;
  src_bytes = src_total;
  dst_bytes = dst_total;
  W = w.W;
  Wo = w.Wo;
  if (scratch) scratch_md = memory::desc({int64_t(scratch)}, memory::data_type::u8, Tag::x);
  return true;
}

OnednnConv::~OnednnConv() = default;

uint64_t OnednnConv::workspace_bytes(int64_t n) const {
  const Impl& d = *impl_;
  if (n > 1 && d.threads > 1) return uint64_t(std::min<int64_t>(d.threads, n)) * d.slot_bytes(1);
  return d.slot_bytes(d.side_by_side());
}

uint64_t OnednnConv::weight_bytes() const {
  uint64_t sum = 0;
  const Impl& d = *impl_;
  if (!d.bands.empty()) sum += d.band_weights.get_desc().get_size() + d.band_bias.get_desc().get_size();
  for (const Impl::Band& b : d.bands)
    if (b.weights) sum += b.weights.get_desc().get_size();
  for (const Impl::Slice& sl : impl_->slices)
    sum += sl.weights.get_desc().get_size() + sl.bias.get_desc().get_size();
  return sum;
}

std::string OnednnConv::algorithm() const {
  const Impl& d = *impl_;
  return "oneDNN " + d.impl_info + " (" + d.layout +
         (d.slices.size() > 1 ? ", " + std::to_string(d.slices.size()) + " slices" : "") +
         (d.bands.empty() ? "" : ", " + std::to_string(d.bands.size()) + " row bands") + ")";
}

// Channels of part p of sample x into the blocked input of the slot at `base`
// (which has `scratches` scratchpads; this call uses number k).
void OnednnConv::Impl::reorder_in(const Part& p, const float* x, char* base, int k, int scratches) const {
  dnnl::engine& eng = engine();
  dnnl::stream strm(eng);
  char* to = base + src_off(scratches) + uint64_t(p.c0 * in_plane) * sizeof(float);
  std::unordered_map<int, memory> args = {
      {DNNL_ARG_FROM, memory(p.plain, eng, const_cast<float*>(x + p.c0 * in_plane))},
      {DNNL_ARG_TO, memory(p.blocked, eng, to)}};
  if (scratch) args.emplace(DNNL_ARG_SCRATCHPAD, memory(scratch_md, eng, base + src_off(k)));
  p.prim.execute(strm, args);
  strm.wait();
}

// Slice sl of sample x (NCHW; its blocked copy in the slot at `base` when
// reordered) into y (NCHW), with scratchpad k of the slot's `scratches`.
void OnednnConv::Impl::run_slice(const Slice& sl, const float* x, float* y, char* base, int k,
                                 int scratches) const {
  dnnl::engine& eng = engine();
  dnnl::stream strm(eng);
  const memory ys(sl.out.plain, eng, y + sl.out.c0 * out_plane);
  char* blocked_dst = base + dst_off(scratches) + uint64_t(sl.out.c0 * out_plane) * sizeof(float);
  const memory dst = sl.out.reorder ? memory(sl.out.blocked, eng, blocked_dst) : ys;
  void* src = reorder_src() ? static_cast<void*>(base + src_off(scratches)) : const_cast<float*>(x);
  std::unordered_map<int, memory> args = {{DNNL_ARG_SRC, memory(src_md, eng, src)},
                                          {DNNL_ARG_WEIGHTS, sl.weights},
                                          {DNNL_ARG_BIAS, sl.bias},
                                          {DNNL_ARG_DST, dst}};
  if (scratch) args.emplace(DNNL_ARG_SCRATCHPAD, memory(scratch_md, eng, base + src_off(k)));
  sl.conv.execute(strm, args);
  if (sl.out.reorder) {
    std::unordered_map<int, memory> r = {{DNNL_ARG_FROM, dst}, {DNNL_ARG_TO, ys}};
    if (scratch) r.emplace(DNNL_ARG_SCRATCHPAD, args.at(DNNL_ARG_SCRATCHPAD));
    sl.out.prim.execute(strm, r);
  }
  strm.wait();
  if (rest.empty()) return;
  for (int64_t c = sl.out.c0; c < sl.out.c1; ++c) rest.apply(y + c * out_plane, c, out_plane);
}

// Band b of sample x (NCHW) into y (NCHW), through its blocked copies in the
// slot at `base`, with scratchpad k of the slot's `scratches`.
void OnednnConv::Impl::run_band(const Band& b, const float* x, float* y, char* base, int k,
                                int scratches) const {
  dnnl::engine& eng = engine();
  dnnl::stream strm(eng);
  const memory xs(b.plain_in, eng, const_cast<float*>(x + b.i0 * W));
  const memory src(b.blocked_in, eng, base + src_off(scratches) + b.src_off);
  const memory dst(b.blocked_out, eng, base + dst_off(scratches) + b.dst_off);
  const memory ys(b.plain_out, eng, y + b.o0 * Wo);
  std::unordered_map<int, memory> in = {{DNNL_ARG_FROM, xs}, {DNNL_ARG_TO, src}};
  std::unordered_map<int, memory> conv = {{DNNL_ARG_SRC, src},
                                          {DNNL_ARG_WEIGHTS, b.weights ? b.weights : band_weights},
                                          {DNNL_ARG_BIAS, band_bias},
                                          {DNNL_ARG_DST, dst}};
  std::unordered_map<int, memory> out = {{DNNL_ARG_FROM, dst}, {DNNL_ARG_TO, ys}};
  if (scratch) {
    const memory pad(scratch_md, eng, base + src_off(k));
    for (auto* args : {&in, &conv, &out}) args->emplace(DNNL_ARG_SCRATCHPAD, pad);
  }
  b.in.execute(strm, in);
  b.conv.execute(strm, conv);
  b.out.execute(strm, out);
  strm.wait();
  if (rest.empty()) return;
  for (int64_t c = 0; c < M; ++c) rest.apply(y + c * out_plane + b.o0 * Wo, c, (b.o1 - b.o0) * Wo);
}

// One sample on this thread alone, in a slot with one scratchpad.
void OnednnConv::Impl::run_sample(const float* x, float* y, char* slot) const {
  char* base = aligned(slot);
  if (!bands.empty()) {
    for (const Band& b : bands) run_band(b, x, y, base, 0, 1);
    return;
  }
  if (reorder_src())
    for (const Part& p : in_parts) reorder_in(p, x, base, 0, 1);
  for (const Slice& sl : slices) run_slice(sl, x, y, base, 0, 1);
}

void OnednnConv::run(const float* x, float* y, int64_t n, void* ws, ThreadPool* pool) const {
  const Impl& d = *impl_;
  char* w = static_cast<char*>(ws);
  const bool team = pool && pool->size() > 1 && d.threads > 1;
  if (team && n > 1) {  // whole samples per pool thread, each with its own slot
    pool->parallel_for(n, [&](int64_t s, int slot) {
      const OmpThreads omp(1);
      d.run_sample(x + s * d.C * d.in_plane, y + s * d.M * d.out_plane, w + uint64_t(slot) * d.slot_bytes(1));
    });
    return;
  }
  const OmpThreads omp(1);
  if (!team || d.side_by_side() == 1) {
    for (int64_t s = 0; s < n; ++s) d.run_sample(x + s * d.C * d.in_plane, y + s * d.M * d.out_plane, w);
    return;
  }
  // One sample: its row bands side by side, or its input's channel blocks,
  // then its output slices, side by side.
  char* base = aligned(w);
  const int k = d.side_by_side();
  if (!d.bands.empty()) {
    pool->parallel_for(int64_t(d.bands.size()), [&](int64_t i, int slot) {
      const OmpThreads one(1);
      d.run_band(d.bands[size_t(i)], x, y, base, slot, k);
    });
    return;
  }
  if (d.reorder_src())
    pool->parallel_for(int64_t(d.in_parts.size()), [&](int64_t i, int slot) {
      const OmpThreads one(1);
      d.reorder_in(d.in_parts[size_t(i)], x, base, slot, k);
    });
  pool->parallel_for(int64_t(d.slices.size()), [&](int64_t i, int slot) {
    const OmpThreads one(1);
    d.run_slice(d.slices[size_t(i)], x, y, base, slot, k);
  });
}

#endif

}  // namespace frugal::cpu
