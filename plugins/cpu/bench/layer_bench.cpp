// Per-layer comparison of CPU kernel paths (not a test; `layer_bench --help`).
// For each layer kind of the zoo networks, at each batch and thread count, the
// GFLOP/s (2 x MACs / time) of three ways to run it, measured side by side in
// interleaved rounds (median of the rounds), and their ratios:
//   blocked  oneDNN with layouts of its choosing (format_tag::any), weights and
//            input reordered once outside the timed region, ReLU as a post-op;
//   plain    oneDNN with plain NCHW activations (weights still reordered once);
//   im2col   im2col + OpenBLAS sgemm + a bias/ReLU pass, the CPU executor's
//            dense conv path (1x1 stride-1 convs skip im2col, as there).
// Every oneDNN scratchpad is caller-owned (scratchpad_mode::user) and its size
// printed. oneDNN runs on OpenMP and OpenBLAS on its own threads; both get
// --threads. Decides which path each layer kind takes (plugins/cpu/README.md).
#include <cblas.h>
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dnnl.hpp>
#include <random>
#include <sstream>
#include <string>
#include <unordered_map>
#include <vector>

extern "C" void openblas_set_num_threads(int);

namespace {

using dnnl::memory;
using Tag = memory::format_tag;

struct Layer {
  const char* name;
  int c, k, h, w, kh, stride, pad, groups;  // k output channels; groups == c: depthwise
  bool fc;                                  // fully connected: c inputs -> k outputs
};

const Layer kLayers[] = {
    {"conv3x3 64->64 @56", 64, 64, 56, 56, 3, 1, 1, 1, false},
    {"conv3x3 256->256 @14", 256, 256, 14, 14, 3, 1, 1, 1, false},
    {"conv1x1 1024->256 @14", 1024, 256, 14, 14, 1, 1, 0, 1, false},
    {"conv1x1 64->256 @56", 64, 256, 56, 56, 1, 1, 0, 1, false},
    {"conv7x7/2 3->64 @224", 3, 64, 224, 224, 7, 2, 3, 1, false},
    {"dw3x3 144 @56", 144, 144, 56, 56, 3, 1, 1, 144, false},
    {"dw5x5/2 240 @28", 240, 240, 28, 28, 5, 2, 2, 240, false},
    {"fc 9216->4096", 9216, 4096, 1, 1, 1, 1, 0, 1, true},
    {"fc 1280->1000", 1280, 1000, 1, 1, 1, 1, 0, 1, true},
};

int out_dim(const Layer& l, int x) { return (x + 2 * l.pad - l.kh) / l.stride + 1; }

double macs(const Layer& l, int n) {
  if (l.fc) return double(n) * l.c * l.k;
  const int group_channels = l.c / l.groups;
  return double(n) * l.k * out_dim(l, l.h) * out_dim(l, l.w) * group_channels * l.kh * l.kh;
}

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::vector<float> random_floats(size_t n, unsigned seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  std::vector<float> v(n);
  for (auto& x : v) x = d(gen);
  return v;
}

// A oneDNN layer: primitive, its memories in the layouts it chose, scratchpad.
struct DnnlLayer {
  dnnl::engine eng{dnnl::engine::kind::cpu, 0};
  dnnl::stream strm{eng};
  dnnl::primitive prim;
  std::unordered_map<int, memory> args;
  size_t scratch_bytes = 0;

  void run() {
    prim.execute(strm, args);
    strm.wait();
  }
};

memory reordered(DnnlLayer& d, const memory::desc& want, const memory::desc& plain, void* data) {
  memory src(plain, d.eng, data);
  memory dst(want, d.eng);
  dnnl::reorder(src, dst).execute(d.strm, src, dst);
  d.strm.wait();
  return dst;
}

dnnl::primitive_attr relu_attr() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  dnnl::post_ops po;
  po.append_eltwise(1.f, dnnl::algorithm::eltwise_relu, 0.f, 0.f);
  attr.set_post_ops(po);
  return attr;
}

template <typename PD>
void bind(DnnlLayer& d, const PD& pd, std::vector<float>& x, std::vector<float>& wt, std::vector<float>& b,
          const memory::desc& x_plain, const memory::desc& w_plain, const memory::desc& b_md) {
  d.args[DNNL_ARG_SRC] = reordered(d, pd.src_desc(), x_plain, x.data());
  d.args[DNNL_ARG_WEIGHTS] = reordered(d, pd.weights_desc(), w_plain, wt.data());
  d.args[DNNL_ARG_BIAS] = memory(b_md, d.eng, b.data());
  d.args[DNNL_ARG_DST] = memory(pd.dst_desc(), d.eng);
  d.scratch_bytes = pd.scratchpad_desc().get_size();
  d.args[DNNL_ARG_SCRATCHPAD] = memory(pd.scratchpad_desc(), d.eng);
}

void make_dnnl(DnnlLayer& d, const Layer& l, int n, bool blocked, std::vector<float>& x,
               std::vector<float>& wt, std::vector<float>& b) {
  const Tag act = blocked ? Tag::any : (l.fc ? Tag::nc : Tag::nchw);
  const memory::dims bias_dims = {l.k};
  const memory::desc b_md(bias_dims, memory::data_type::f32, Tag::x);
  const auto f32 = memory::data_type::f32;
  if (l.fc) {
    const memory::dims xd = {n, l.c}, wd = {l.k, l.c}, yd = {n, l.k};
    dnnl::inner_product_forward::desc desc(dnnl::prop_kind::forward_inference, memory::desc(xd, f32, act),
                                           memory::desc(wd, f32, Tag::any), b_md, memory::desc(yd, f32, act));
    dnnl::inner_product_forward::primitive_desc pd(desc, relu_attr(), d.eng);
    d.prim = dnnl::inner_product_forward(pd);
    bind(d, pd, x, wt, b, memory::desc(xd, f32, Tag::nc), memory::desc(wd, f32, Tag::oi), b_md);
    return;
  }
  const int ho = out_dim(l, l.h), wo = out_dim(l, l.w), g = l.groups;
  const memory::dims xd = {n, l.c, l.h, l.w}, yd = {n, l.k, ho, wo};
  const memory::dims wd =
      g == 1 ? memory::dims{l.k, l.c, l.kh, l.kh} : memory::dims{g, l.k / g, l.c / g, l.kh, l.kh};
  const memory::dims st = {l.stride, l.stride}, pad = {l.pad, l.pad};
  dnnl::convolution_forward::desc desc(
      dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, memory::desc(xd, f32, act),
      memory::desc(wd, f32, Tag::any), b_md, memory::desc(yd, f32, act), st, pad, pad);
  dnnl::convolution_forward::primitive_desc pd(desc, relu_attr(), d.eng);
  d.prim = dnnl::convolution_forward(pd);
  bind(d, pd, x, wt, b, memory::desc(xd, f32, Tag::nchw),
       memory::desc(wd, f32, g == 1 ? Tag::oihw : Tag::goihw), b_md);
}

// The CPU executor's way: im2col per (sample, group), one sgemm, bias + ReLU.
struct Im2colLayer {
  const Layer* l;
  int n;
  std::vector<float>*x, *wt, *b;
  std::vector<float> col, y;

  bool direct() const { return l->fc || (l->kh == 1 && l->stride == 1 && l->pad == 0); }

  void im2col(const float* src) {
    const int ho = out_dim(*l, l->h), wo = out_dim(*l, l->w), cg = l->c / l->groups;
    size_t i = 0;
    for (int c = 0; c < cg; ++c)
      for (int ky = 0; ky < l->kh; ++ky)
        for (int kx = 0; kx < l->kh; ++kx)
          for (int oy = 0; oy < ho; ++oy) {
            const int iy = oy * l->stride - l->pad + ky;
            for (int ox = 0; ox < wo; ++ox) {
              const int ix = ox * l->stride - l->pad + kx;
              col[i++] = iy < 0 || iy >= l->h || ix < 0 || ix >= l->w
                             ? 0.f
                             : src[(size_t(c) * l->h + iy) * l->w + ix];
            }
          }
  }

  void run() {
    if (l->fc) {
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, l->k, l->c, 1.f, x->data(), l->c, wt->data(),
                  l->c, 0.f, y.data(), l->k);
      epilogue(y.data(), n, l->k, 1);
      return;
    }
    const int g = l->groups, cg = l->c / g, kg = l->k / g, plane = out_dim(*l, l->h) * out_dim(*l, l->w);
    const int kk = cg * l->kh * l->kh;
    for (int s = 0; s < n; ++s)
      for (int gi = 0; gi < g; ++gi) {
        const float* src = x->data() + (size_t(s) * l->c + size_t(gi) * cg) * l->h * l->w;
        if (!direct()) im2col(src);
        float* dst = y.data() + (size_t(s) * l->k + size_t(gi) * kg) * plane;
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kg, plane, kk, 1.f,
                    wt->data() + size_t(gi) * kg * kk, kk, direct() ? src : col.data(), plane, 0.f, dst,
                    plane);
      }
    epilogue(y.data(), n, l->k, plane);
  }

  void epilogue(float* v, int rows, int ch, int plane) {
    for (int r = 0; r < rows; ++r)
      for (int c = 0; c < ch; ++c) {
        float* p = v + (size_t(r) * ch + c) * plane;
        for (int i = 0; i < plane; ++i) p[i] = std::max(p[i] + (*b)[c], 0.f);
      }
  }
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Seconds per call: repeats the call until ~budget seconds have passed.
template <typename F>
double time_call(F&& f, double budget) {
  f();
  int reps = 0;
  const double t0 = now();
  do {
    f();
    ++reps;
  } while (now() - t0 < budget);
  return (now() - t0) / reps;
}

std::vector<int> parse_list(const char* s) {
  std::vector<int> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(std::atoi(item.c_str()));
  return out;
}

void bench_layer(const Layer& l, int n, int threads, int rounds, double budget) {
  const int ho = out_dim(l, l.h), wo = out_dim(l, l.w);
  auto x = random_floats(size_t(n) * l.c * l.h * l.w, 1);
  auto wt = random_floats(size_t(l.k) * (l.c / l.groups) * l.kh * l.kh, 2);
  auto b = random_floats(size_t(l.k), 3);
  DnnlLayer blocked, plain;
  make_dnnl(blocked, l, n, true, x, wt, b);
  make_dnnl(plain, l, n, false, x, wt, b);
  Im2colLayer ic{&l, n, &x, &wt, &b, {}, {}};
  ic.col.resize(ic.direct() ? 0 : size_t(l.c / l.groups) * l.kh * l.kh * ho * wo);
  ic.y.resize(size_t(n) * l.k * ho * wo);
  std::vector<double> tb, tp, ti;
  // One untimed round first: JIT code generation, OpenMP and OpenBLAS thread start.
  for (int r = -1; r < rounds; ++r) {
    if (r < 0) {
      time_call([&] { blocked.run(); }, budget);
      time_call([&] { plain.run(); }, budget);
      time_call([&] { ic.run(); }, budget);
      continue;
    }
    tb.push_back(time_call([&] { blocked.run(); }, budget));
    tp.push_back(time_call([&] { plain.run(); }, budget));
    ti.push_back(time_call([&] { ic.run(); }, budget));
  }
  const double gf = 2e-9 * macs(l, n);
  const double b_gf = gf / median(tb), p_gf = gf / median(tp), i_gf = gf / median(ti);
  std::printf("%-22s %5d %7d %9.1f %9.1f %9.1f %8.2f %8.2f %8zu %8zu\n", l.name, n, threads, b_gf, p_gf, i_gf,
              b_gf / i_gf, p_gf / i_gf, blocked.scratch_bytes, plain.scratch_bytes);
  std::fflush(stdout);
}

void usage() {
  std::puts(
      "layer_bench [--batches 1,8] [--threads 1,2] [--rounds 5] [--seconds 0.1] [--layer SUBSTRING]\n"
      "GFLOP/s of oneDNN blocked, oneDNN plain NCHW and im2col + OpenBLAS on typical\n"
      "layers, measured in interleaved rounds (median). blk/i2c and pln/i2c are ratios\n"
      "to the im2col path; scratch = oneDNN's scratchpad bytes (blocked, plain).\n"
      "ONEDNN_MAX_CPU_ISA=AVX2 limits oneDNN to AVX2 kernels (as on CI machines).");
}

int run_main(int argc, char** argv) {
  std::vector<int> batches = {1, 8}, threads = {1, 2};
  int rounds = 5;
  double seconds = 0.1;
  std::string only;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--help" || a == "-h") {
      usage();
      return 0;
    } else if (a == "--batches" && has_value) {
      batches = parse_list(argv[++i]);
    } else if (a == "--threads" && has_value) {
      threads = parse_list(argv[++i]);
    } else if (a == "--rounds" && has_value) {
      rounds = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--seconds" && has_value) {
      seconds = std::atof(argv[++i]);
    } else if (a == "--layer" && has_value) {
      only = argv[++i];
    } else {
      std::fprintf(stderr, "layer_bench: unknown or incomplete argument '%s' (see --help)\n", a.c_str());
      return 2;
    }
  }
  const bool any_match = std::any_of(std::begin(kLayers), std::end(kLayers), [&](const Layer& l) {
    return std::string(l.name).find(only) != std::string::npos;
  });
  if (!any_match) {
    std::fprintf(stderr, "layer_bench: no layer name contains '%s'; layers are:\n", only.c_str());
    for (const Layer& l : kLayers) std::fprintf(stderr, "  %s\n", l.name);
    return 2;
  }
  const char* isa = std::getenv("ONEDNN_MAX_CPU_ISA");
  std::printf("oneDNN %d.%d.%d, ISA limit %s, %d rounds\n", dnnl_version()->major, dnnl_version()->minor,
              dnnl_version()->patch, isa ? isa : "none", rounds);
  std::printf("%-22s %5s %7s %9s %9s %9s %8s %8s %8s %8s\n", "layer", "batch", "threads", "blocked", "plain",
              "im2col", "blk/i2c", "pln/i2c", "scr.blk", "scr.pln");
  for (int t : threads) {
    omp_set_num_threads(t);
    openblas_set_num_threads(t);
    for (const Layer& l : kLayers) {
      if (!only.empty() && std::string(l.name).find(only) == std::string::npos) continue;
      for (int n : batches) bench_layer(l, n, t, rounds, seconds);
    }
  }
  return 0;
}
}  // namespace

int main(int argc, char** argv) {
  try {
    return run_main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "layer_bench: %s\n", e.what());
    return 1;
  }
}
