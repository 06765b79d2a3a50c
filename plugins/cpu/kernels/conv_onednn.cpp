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
struct OnednnConv::Impl {};
OnednnConv::OnednnConv(const exec::Window&, int64_t, int64_t, int64_t, const std::vector<float>&,
                       const Epilogue&, int) {
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

// One way to run the layer: a convolution primitive made for `threads` OpenMP
// threads, the reorders around it, and one sample's workspace (a slot):
// [scratchpad | blocked src | blocked dst], each at a 64-byte boundary, plus
// 64 bytes to align the slot's start.
struct Path {
  int threads = 1;
  dnnl::convolution_forward conv;
  std::string impl_info;
  memory::desc src_md, weights_md, dst_md, scratch_md;
  bool reorder_src = false, reorder_dst = false;
  dnnl::reorder to_blocked, to_plain;
  uint64_t src_off = 0, dst_off = 0, slot_bytes = 0;
};

struct OnednnConv::Impl {
  int threads = 1;
  int64_t C = 0, M = 0, in_plane = 0, out_plane = 0;
  memory::desc src_plain, dst_plain;
  memory weights, bias;
  Epilogue rest;  // the epilogue's steps oneDNN does not apply, on the host
  Path team;      // one sample on all threads (OpenMP)
  // With several threads: one sample per thread of the executor's pool, on a
  // primitive made for one thread with the team's layouts and implementation
  // (so a sample's result is the same on either path); absent if oneDNN has none.
  std::unique_ptr<Path> solo;

  bool per_thread(int64_t n, ThreadPool* pool) const { return solo && n > 1 && pool && pool->size() > 1; }
  void run_sample(const Path& p, const float* x, float* y, char* slot, ThreadPool* pool) const;
};

namespace {

// The primitive for `desc` made with `threads` threads, and its reorders and slot.
Path make_path(const dnnl::convolution_forward::desc& desc, const dnnl::primitive_attr& attr,
               const memory::desc& src_plain, const memory::desc& dst_plain, int threads) {
  const OmpThreads omp(threads);  // oneDNN sizes its work split when it creates a primitive
  Path p;
  p.threads = threads;
  const dnnl::convolution_forward::primitive_desc pd(desc, attr, engine());
  p.conv = dnnl::convolution_forward(pd);
  p.impl_info = pd.impl_info_str();
  p.src_md = pd.src_desc();
  p.weights_md = pd.weights_desc();
  p.dst_md = pd.dst_desc();
  uint64_t scratch = pd.scratchpad_desc().get_size();
  dnnl::primitive_attr reorder_attr;
  reorder_attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  p.reorder_src = p.src_md != src_plain;
  p.reorder_dst = p.dst_md != dst_plain;
  if (p.reorder_src) {
    const dnnl::reorder::primitive_desc r(engine(), src_plain, engine(), p.src_md, reorder_attr);
    scratch = std::max<uint64_t>(scratch, r.scratchpad_desc().get_size());
    p.to_blocked = dnnl::reorder(r);
  }
  if (p.reorder_dst) {
    const dnnl::reorder::primitive_desc r(engine(), p.dst_md, engine(), dst_plain, reorder_attr);
    scratch = std::max<uint64_t>(scratch, r.scratchpad_desc().get_size());
    p.to_plain = dnnl::reorder(r);
  }
  if (scratch) p.scratch_md = memory::desc({int64_t(scratch)}, memory::data_type::u8, Tag::x);
  p.src_off = round_up(scratch);
  p.dst_off = p.src_off + (p.reorder_src ? round_up(p.src_md.get_size()) : 0);
  const uint64_t end = p.dst_off + (p.reorder_dst ? p.dst_md.get_size() : 0);
  p.slot_bytes = end == 0 ? 0 : end + kAlign;
  return p;
}

char* aligned(char* p) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  return reinterpret_cast<char*>((a + kAlign - 1) / kAlign * kAlign);
}

}  // namespace

OnednnConv::OnednnConv(const exec::Window& w, int64_t group, int64_t C, int64_t M,
                       const std::vector<float>& weights, const Epilogue& epilogue, int threads)
    : impl_(std::make_unique<Impl>()) {
  Impl& d = *impl_;
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
  const memory::dims strides = {w.sh, w.sw}, dil = {w.dh - 1, w.dw - 1}, pad_l = {w.pt, w.pl},
                     pad_r = {w.pb, w.pr};
  const auto fwd = dnnl::prop_kind::forward_inference;
  const auto direct = dnnl::algorithm::convolution_direct;
  const memory::desc w_any(wd, kF32, Tag::any);
  try {
    const dnnl::convolution_forward::desc desc(fwd, direct, memory::desc(xd, kF32, Tag::any), w_any, b_md,
                                               memory::desc(yd, kF32, Tag::any), strides, dil, pad_l, pad_r);
    d.team = make_path(desc, attr, d.src_plain, d.dst_plain, threads);
  } catch (const dnnl::error& e) {
    throw Error(std::string("oneDNN has no convolution for this layer: ") + e.what());
  }
  const memory::desc& w_md = d.team.weights_md;
  if (threads > 1) {
    try {  // the team's layouts, weights included, for one thread
      const dnnl::convolution_forward::desc desc(fwd, direct, d.team.src_md, w_md, b_md, d.team.dst_md,
                                                 strides, dil, pad_l, pad_r);
      auto solo = std::make_unique<Path>(make_path(desc, attr, d.src_plain, d.dst_plain, 1));
      if (solo->impl_info == d.team.impl_info && solo->weights_md == w_md) d.solo = std::move(solo);
    } catch (const dnnl::error&) {
    }
  }
  // Weights reordered once into the primitives' layout; the bias as is.
  dnnl::stream strm(engine());
  d.weights = memory(w_md, engine());
  memory w_plain(memory::desc(wd, kF32, group == 1 ? Tag::oihw : Tag::goihw), engine(), wt.data());
  dnnl::reorder(w_plain, d.weights).execute(strm, w_plain, d.weights);
  d.bias = memory(b_md, engine());
  memory b_plain(b_md, engine(), b.data());
  dnnl::reorder(b_plain, d.bias).execute(strm, b_plain, d.bias);
  strm.wait();
}

OnednnConv::~OnednnConv() = default;

uint64_t OnednnConv::workspace_bytes(int64_t n) const {
  const Impl& d = *impl_;
  if (d.solo && n > 1 && d.threads > 1) return uint64_t(std::min<int64_t>(d.threads, n)) * d.solo->slot_bytes;
  return d.team.slot_bytes;
}

uint64_t OnednnConv::weight_bytes() const {
  return impl_->weights.get_desc().get_size() + impl_->bias.get_desc().get_size();
}

std::string OnednnConv::algorithm() const {
  const Path& p = impl_->team;
  std::string layout = p.src_md.data.format_desc.blocking.inner_nblks ? "blocked" : "nchw";
  layout += p.dst_md.data.format_desc.blocking.inner_nblks ? " -> blocked" : " -> nchw";
  return "oneDNN " + p.impl_info + " (" + layout + ")";
}

void OnednnConv::Impl::run_sample(const Path& p, const float* x, float* y, char* slot,
                                  ThreadPool* pool) const {
  dnnl::engine& eng = engine();
  dnnl::stream strm(eng);
  char* base = p.slot_bytes ? aligned(slot) : nullptr;
  const bool has_scratch = p.src_off > 0;
  std::unordered_map<int, memory> args;
  if (has_scratch) args.emplace(DNNL_ARG_SCRATCHPAD, memory(p.scratch_md, eng, base));
  const memory xs(src_plain, eng, const_cast<float*>(x)), ys(dst_plain, eng, y);
  const memory src = p.reorder_src ? memory(p.src_md, eng, base + p.src_off) : xs;
  const memory dst = p.reorder_dst ? memory(p.dst_md, eng, base + p.dst_off) : ys;
  if (p.reorder_src) {
    args[DNNL_ARG_FROM] = xs;
    args[DNNL_ARG_TO] = src;
    p.to_blocked.execute(strm, args);
  }
  args.erase(DNNL_ARG_FROM);
  args.erase(DNNL_ARG_TO);
  args[DNNL_ARG_SRC] = src;
  args[DNNL_ARG_WEIGHTS] = weights;
  args[DNNL_ARG_BIAS] = bias;
  args[DNNL_ARG_DST] = dst;
  p.conv.execute(strm, args);
  if (p.reorder_dst) {
    std::unordered_map<int, memory> r = {{DNNL_ARG_FROM, dst}, {DNNL_ARG_TO, ys}};
    if (has_scratch) r.emplace(DNNL_ARG_SCRATCHPAD, args.at(DNNL_ARG_SCRATCHPAD));
    p.to_plain.execute(strm, r);
  }
  strm.wait();
  if (!rest.empty()) rest.apply_tensor(y, 1, M, out_plane, pool);
}

void OnednnConv::run(const float* x, float* y, int64_t n, void* ws, ThreadPool* pool) const {
  const Impl& d = *impl_;
  char* w = static_cast<char*>(ws);
  if (d.per_thread(n, pool)) {
    // Whole samples per pool thread, each with its own slot, OpenMP at one thread.
    pool->parallel_for(n, [&](int64_t s, int slot) {
      const OmpThreads omp(1);
      d.run_sample(*d.solo, x + s * d.C * d.in_plane, y + s * d.M * d.out_plane,
                   w + uint64_t(slot) * d.solo->slot_bytes, nullptr);
    });
    return;
  }
  const OmpThreads omp(d.threads);
  for (int64_t s = 0; s < n; ++s)
    d.run_sample(d.team, x + s * d.C * d.in_plane, y + s * d.M * d.out_plane, w, pool);
}

#endif

}  // namespace frugal::cpu
