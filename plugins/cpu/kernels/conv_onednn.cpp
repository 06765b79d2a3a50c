#include "kernels/conv_onednn.h"

#include "frugal/error.h"

#ifdef FRUGAL_HAVE_DNNL
#include <omp.h>

#include <dnnl.hpp>
#include <unordered_map>
#endif

namespace frugal::cpu {

#ifndef FRUGAL_HAVE_DNNL

bool onednn_available() { return false; }
void onednn_set_threads(int) {}
struct OnednnConv::Impl {};
OnednnConv::OnednnConv(const exec::Window&, int64_t, int64_t, int64_t, const std::vector<float>&,
                       const Epilogue&, int) {
  throw Error("this build has no oneDNN (libdnnl-dev)");
}
OnednnConv::~OnednnConv() = default;
uint64_t OnednnConv::workspace_bytes() const { return 0; }
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
void onednn_set_threads(int threads) { omp_set_num_threads(threads); }

struct OnednnConv::Impl {
  int threads = 1;
  int64_t C = 0, M = 0, in_plane = 0, out_plane = 0;
  dnnl::convolution_forward conv;
  memory::desc src_plain, dst_plain, src_md, dst_md, scratch_md;
  bool reorder_src = false, reorder_dst = false;
  dnnl::reorder to_blocked, to_plain;
  memory weights, bias;
  std::string impl_info;
  Epilogue rest;  // the epilogue's steps oneDNN does not apply, on the host
  // Workspace: [scratchpad | blocked src | blocked dst], each at a 64-byte boundary.
  uint64_t src_off = 0, dst_off = 0, ws_bytes = 0;
};

OnednnConv::OnednnConv(const exec::Window& w, int64_t group, int64_t C, int64_t M,
                       const std::vector<float>& weights, const Epilogue& epilogue, int threads)
    : impl_(std::make_unique<Impl>()) {
  Impl& d = *impl_;
  const OmpThreads omp(threads);  // the primitives are made for the thread count they run with
  d.threads = threads;
  d.C = C;
  d.M = M;
  d.in_plane = w.H * w.W;
  d.out_plane = w.Ho * w.Wo;
  // The leading affine map (bias, BN) folded into the weights and bias.
  const int64_t per_out = int64_t(weights.size()) / M;
  std::vector<float> wt = weights, b(size_t(M), 0.0f);
  const auto& steps = epilogue.steps();
  size_t next = 0;
  if (!steps.empty() && steps[0].kind == exec::EpilogueSteps::kAffine) {
    for (int64_t m = 0; m < M; ++m) {
      for (int64_t i = 0; i < per_out; ++i) wt[size_t(m * per_out + i)] *= steps[0].scale[size_t(m)];
      b[size_t(m)] = steps[0].shift[size_t(m)];
    }
    next = 1;
  }
  dnnl::post_ops po;
  for (; next < steps.size() && steps[next].kind != exec::EpilogueSteps::kAffine; ++next)
    if (!append_activation(steps[next], po)) break;
  for (; next < steps.size(); ++next) {
    if (steps[next].kind == exec::EpilogueSteps::kAffine)
      d.rest.add_affine(steps[next].scale, steps[next].shift);
    else
      d.rest.add_activation(ops::ActivationKind(steps[next].kind), steps[next].a, steps[next].b);
  }
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  attr.set_post_ops(po);

  const memory::dims xd = {1, C, w.H, w.W}, yd = {1, M, w.Ho, w.Wo};
  const memory::dims wd =
      group == 1 ? memory::dims{M, C, w.kh, w.kw} : memory::dims{group, M / group, C / group, w.kh, w.kw};
  d.src_plain = memory::desc(xd, kF32, Tag::nchw);
  d.dst_plain = memory::desc(yd, kF32, Tag::nchw);
  const memory::desc b_md({M}, kF32, Tag::x);
  const dnnl::convolution_forward::desc desc(
      dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
      memory::desc(xd, kF32, Tag::any), memory::desc(wd, kF32, Tag::any), b_md,
      memory::desc(yd, kF32, Tag::any), {w.sh, w.sw}, {w.dh - 1, w.dw - 1}, {w.pt, w.pl}, {w.pb, w.pr});
  dnnl::convolution_forward::primitive_desc pd;
  try {
    pd = dnnl::convolution_forward::primitive_desc(desc, attr, engine());
  } catch (const dnnl::error& e) {
    throw Error(std::string("oneDNN has no convolution for this layer: ") + e.what());
  }
  d.conv = dnnl::convolution_forward(pd);
  d.impl_info = pd.impl_info_str();
  d.src_md = pd.src_desc();
  d.dst_md = pd.dst_desc();
  d.scratch_md = pd.scratchpad_desc();
  uint64_t scratch = d.scratch_md.get_size();
  dnnl::stream strm(engine());
  // Weights reordered once into the primitive's layout; the bias as is.
  d.weights = memory(pd.weights_desc(), engine());
  memory w_plain(memory::desc(wd, kF32, group == 1 ? Tag::oihw : Tag::goihw), engine(), wt.data());
  dnnl::reorder(w_plain, d.weights).execute(strm, w_plain, d.weights);
  d.bias = memory(b_md, engine());
  memory b_plain(b_md, engine(), b.data());
  dnnl::reorder(b_plain, d.bias).execute(strm, b_plain, d.bias);
  strm.wait();
  dnnl::primitive_attr reorder_attr;
  reorder_attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  d.reorder_src = d.src_md != d.src_plain;
  d.reorder_dst = d.dst_md != d.dst_plain;
  if (d.reorder_src) {
    const dnnl::reorder::primitive_desc r(engine(), d.src_plain, engine(), d.src_md, reorder_attr);
    scratch = std::max<uint64_t>(scratch, r.scratchpad_desc().get_size());
    d.to_blocked = dnnl::reorder(r);
  }
  if (d.reorder_dst) {
    const dnnl::reorder::primitive_desc r(engine(), d.dst_md, engine(), d.dst_plain, reorder_attr);
    scratch = std::max<uint64_t>(scratch, r.scratchpad_desc().get_size());
    d.to_plain = dnnl::reorder(r);
  }
  if (scratch) d.scratch_md = memory::desc({int64_t(scratch)}, memory::data_type::u8, Tag::x);
  d.src_off = round_up(scratch);
  d.dst_off = d.src_off + (d.reorder_src ? round_up(d.src_md.get_size()) : 0);
  const uint64_t end = d.dst_off + (d.reorder_dst ? d.dst_md.get_size() : 0);
  d.ws_bytes = end == 0 ? 0 : end + kAlign;  // kAlign: room to start at a 64-byte boundary
}

OnednnConv::~OnednnConv() = default;

uint64_t OnednnConv::workspace_bytes() const { return impl_->ws_bytes; }

uint64_t OnednnConv::weight_bytes() const {
  return impl_->weights.get_desc().get_size() + impl_->bias.get_desc().get_size();
}

std::string OnednnConv::algorithm() const {
  const Impl& d = *impl_;
  std::string layout =
      d.src_md.data.format_kind == dnnl_blocked && d.src_md.data.format_desc.blocking.inner_nblks ? "blocked"
                                                                                                  : "nchw";
  layout += d.dst_md.data.format_desc.blocking.inner_nblks ? " -> blocked" : " -> nchw";
  return "oneDNN " + d.impl_info + " (" + layout + ")";
}

void OnednnConv::run(const float* x, float* y, int64_t n, void* ws, ThreadPool* pool) const {
  const Impl& d = *impl_;
  const OmpThreads omp(d.threads);
  const uintptr_t a = reinterpret_cast<uintptr_t>(ws);
  char* base = d.ws_bytes ? reinterpret_cast<char*>((a + kAlign - 1) / kAlign * kAlign) : nullptr;
  dnnl::engine& eng = engine();
  dnnl::stream strm(eng);
  const bool has_scratch = d.src_off > 0;
  const memory scratch = has_scratch ? memory(d.scratch_md, eng, base) : memory();
  const memory src_b = d.reorder_src ? memory(d.src_md, eng, base + d.src_off) : memory();
  const memory dst_b = d.reorder_dst ? memory(d.dst_md, eng, base + d.dst_off) : memory();
  auto with_scratch = [&](std::unordered_map<int, memory> args) {
    if (has_scratch) args.emplace(DNNL_ARG_SCRATCHPAD, scratch);
    return args;
  };
  for (int64_t s = 0; s < n; ++s) {
    const memory xs(d.src_plain, eng, const_cast<float*>(x + s * d.C * d.in_plane));
    const memory ys(d.dst_plain, eng, y + s * d.M * d.out_plane);
    if (d.reorder_src) d.to_blocked.execute(strm, with_scratch({{DNNL_ARG_FROM, xs}, {DNNL_ARG_TO, src_b}}));
    d.conv.execute(strm, with_scratch({{DNNL_ARG_SRC, d.reorder_src ? src_b : xs},
                                       {DNNL_ARG_WEIGHTS, d.weights},
                                       {DNNL_ARG_BIAS, d.bias},
                                       {DNNL_ARG_DST, d.reorder_dst ? dst_b : ys}}));
    if (d.reorder_dst) d.to_plain.execute(strm, with_scratch({{DNNL_ARG_FROM, dst_b}, {DNNL_ARG_TO, ys}}));
    strm.wait();
    if (!d.rest.empty()) d.rest.apply_tensor(y + s * d.M * d.out_plane, 1, d.M, d.out_plane, pool);
  }
}

#endif

}  // namespace frugal::cpu
