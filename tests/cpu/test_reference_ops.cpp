// (b) Conv, pooling, Gemm and MatMul on random shapes (groups, depthwise,
// dilations, asymmetric pads, auto_pad, strides, ceil_mode, count_include_pad,
// transposes, bias shapes, broadcast batch dims; with BN/activations bundled
// after conv and Gemm) against the float64 reference evaluator.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>

#include "cpu_plugin.h"
#include "graph_helpers.h"
#include "op_cases.h"
#include "reference.h"

using cpu_test::GraphMaker;
using cpu_test::HostTensor;
using cpu_test::numel;

namespace {

// Runs the graph through the plugin and the reference on random inputs; returns
// the worst error relative to the tolerance (must be <= 1).
double compare(const frugal::Graph& g, uint64_t seed, std::string& detail, int64_t batch = 1) {
  frugal::RefValues ref_in;
  std::vector<HostTensor> inputs;
  for (const std::string& name : g.inputs) {
    std::vector<int64_t> dims;
    for (const frugal::Dim& d : g.tensor(name).shape) dims.push_back(d.is_known() ? d.value : batch);
    const std::vector<float> v = cpu_test::random_floats(size_t(numel(dims)), seed++);
    inputs.push_back(HostTensor{name, dims, v});
    ref_in[name] = cpu_test::ref_of(dims, v);
  }
  const frugal::RefValues want = frugal::reference_run(g, ref_in);
  cpu_test::Executor ex(g, "{\"threads\": 2}");
  if (!ex.ok()) {
    detail = "create: " + ex.created.message;
    return 1e9;
  }
  std::vector<HostTensor> outputs;
  const cpu_test::Status st = ex.run(inputs, outputs);
  if (!st.ok()) {
    detail = "run: " + st.message;
    return 1e9;
  }
  double worst = 0.0;
  for (const HostTensor& o : outputs) {
    const frugal::RefTensor& r = want.at(o.name);
    if (r.dims != o.dims) {
      detail = "output dims differ";
      return 1e9;
    }
    for (size_t i = 0; i < r.data.size(); ++i) {
      const double tol = 1e-5 + 1e-4 * std::fabs(r.data[i]);
      const double e = std::fabs(double(o.data[i]) - r.data[i]) / tol;
      if (e > worst) {
        worst = e;
        std::ostringstream s;
        s << "element " << i << ": got " << o.data[i] << ", want " << r.data[i];
        detail = s.str();
      }
    }
  }
  return worst;
}

std::string describe(const frugal::Graph& g) {
  std::ostringstream s;
  for (const std::string& in : g.inputs) s << in << frugal::shape_to_string(g.tensor(in).shape) << " ";
  for (const frugal::Node& n : g.nodes) {
    s << n.op_type << "{";
    for (const frugal::Attribute& a : n.attributes) {
      s << a.name << "=";
      if (a.kind == frugal::Attribute::Kind::Ints)
        for (int64_t v : a.ints) s << v << ",";
      else if (a.kind == frugal::Attribute::Kind::String)
        s << a.s;
      else if (a.kind == frugal::Attribute::Kind::Float)
        s << a.f;
      else
        s << a.i;
      s << " ";
    }
    s << "} ";
  }
  return s.str();
}

void set_string(frugal::Node& n, const std::string& name, const std::string& v) {
  frugal::Attribute a;
  a.name = name;
  a.kind = frugal::Attribute::Kind::String;
  a.s = v;
  n.attributes.push_back(a);
}

// Adds BN (random statistics), optionally followed by Relu or Clip, after `x` with `channels`.
std::string add_bn_tail(GraphMaker& m, std::mt19937_64& rng, const std::string& x, int64_t channels) {
  auto vals = [&](float lo, float hi) { return cpu_test::random_floats(size_t(channels), rng(), lo, hi); };
  m.constant(x + ".g", {channels}, vals(-1.5f, 1.5f));
  m.constant(x + ".b", {channels}, vals(-0.5f, 0.5f));
  m.constant(x + ".m", {channels}, vals(-0.5f, 0.5f));
  m.constant(x + ".v", {channels}, vals(0.2f, 2.0f));
  m.node("BatchNormalization", {x, x + ".g", x + ".b", x + ".m", x + ".v"}, x + ".bn");
  std::string y = x + ".bn";
  switch (rng() % 3) {
    case 0:
      m.node("Relu", {y}, y + ".relu");
      return y + ".relu";
    case 1:
      m.constant(y + ".lo", {}, {0.0f});
      m.constant(y + ".hi", {}, {0.5f});
      m.node("Clip", {y, y + ".lo", y + ".hi"}, y + ".clip");
      return y + ".clip";
    default:
      return y;
  }
}

}  // namespace

TEST_CASE("Conv on random shapes matches the float64 reference", "[cpu][reference]") {
  std::mt19937_64 rng(20240601);
  auto pick = [&](int64_t lo, int64_t hi) { return lo + int64_t(rng() % uint64_t(hi - lo + 1)); };
  int built = 0, depthwise = 0, pointwise = 0, one_d = 0, autopad = 0;
  while (built < 80) {
    const bool is1d = pick(0, 4) == 0;
    const int r = is1d ? 1 : 2;
    const int64_t kind = pick(0, 5);
    int64_t group = 1, C, M;
    if (kind <= 2) {
      C = pick(1, 6);
      M = pick(1, 6);
    } else if (kind <= 4) {  // depthwise, channel multiplier 1 or 2
      group = pick(2, 6);
      C = group;
      M = group * pick(1, 2);
    } else {
      group = pick(2, 3);
      C = group * pick(1, 3);
      M = group * pick(1, 3);
    }
    std::vector<int64_t> k(r), s(r), d(r), in(r), pads(2 * r);
    const bool force_1x1 = pick(0, 6) == 0;
    for (int i = 0; i < r; ++i) {
      k[i] = force_1x1 ? 1 : pick(1, 4);
      s[i] = force_1x1 ? 1 : pick(1, 3);
      d[i] = force_1x1 ? 1 : pick(1, 2);
      in[i] = pick(1, 12);
      pads[i] = force_1x1 ? 0 : pick(0, 2);
      pads[i + r] = force_1x1 ? 0 : pick(0, 2);
    }
    const int64_t ap = force_1x1 ? 0 : pick(0, 5);  // 0..2: explicit pads
    const char* auto_pad = ap == 3 ? "SAME_UPPER" : ap == 4 ? "SAME_LOWER" : ap == 5 ? "VALID" : nullptr;
    bool fits = true;
    for (int i = 0; i < r; ++i) {
      const int64_t span = (k[i] - 1) * d[i] + 1;
      const int64_t padded = auto_pad && std::string(auto_pad) == "VALID" ? in[i]
                             : auto_pad                                   ? in[i] + span
                                                                          : in[i] + pads[i] + pads[i + r];
      if (padded < span) fits = false;
    }
    if (!fits) continue;
    const int64_t N = pick(1, 3);
    GraphMaker m;
    std::vector<int64_t> xd = {N, C};
    xd.insert(xd.end(), in.begin(), in.end());
    const bool symbolic = pick(0, 1) == 1;
    m.input("x", xd, symbolic);
    std::vector<int64_t> wd = {M, C / group};
    wd.insert(wd.end(), k.begin(), k.end());
    m.constant("W", wd, cpu_test::random_floats(size_t(numel(wd)), rng()));
    std::vector<std::string> ins = {"x", "W"};
    if (pick(0, 1)) {
      m.constant("B", {M}, cpu_test::random_floats(size_t(M), rng()));
      ins.push_back("B");
    }
    frugal::Node& n = m.node("Conv", ins, "y");
    n.set_attr_ints("kernel_shape", k);
    n.set_attr_ints("strides", s);
    n.set_attr_ints("dilations", d);
    n.set_attr_int("group", group);
    if (auto_pad)
      set_string(n, "auto_pad", auto_pad);
    else
      n.set_attr_ints("pads", pads);
    std::string out = "y";
    if (pick(0, 2) == 0) out = add_bn_tail(m, rng, "y", M);
    m.output(out);
    std::string detail;
    const double err = compare(m.graph(), rng(), detail, N);
    INFO(describe(m.graph()) << " -> " << detail);
    CHECK(err <= 1.0);
    ++built;
    depthwise += kind >= 3 && kind <= 4;
    pointwise += force_1x1;
    one_d += is1d;
    autopad += auto_pad != nullptr;
  }
  CHECK(depthwise > 5);
  CHECK(pointwise > 3);
  CHECK(one_d > 5);
  CHECK(autopad > 5);
}

// A depthwise conv (group = C, `mult` outputs per channel) of a K x K kernel,
// followed by a BN tail, on an input of `shape` (N, C, H, W), against the
// float64 reference.
static void check_depthwise(const std::vector<int64_t>& shape, int64_t mult, int64_t K, int64_t stride,
                            const std::vector<int64_t>& pads, std::mt19937_64& rng) {
  const int64_t C = shape[1];
  GraphMaker m;
  m.input("x", shape);
  m.constant("W", {C * mult, 1, K, K}, cpu_test::random_floats(size_t(C * mult * K * K), rng()));
  frugal::Node& n = m.node("Conv", {"x", "W"}, "y");
  n.set_attr_int("group", C);
  n.set_attr_ints("strides", {stride, stride});
  n.set_attr_ints("pads", pads);
  m.output(add_bn_tail(m, rng, "y", C * mult));
  std::string detail;
  const double err = compare(m.graph(), rng(), detail, shape[0]);
  INFO(describe(m.graph()) << " -> " << detail);
  CHECK(err <= 1.0);
}

TEST_CASE("depthwise 3x3 and 5x5 convs (the fused paths) on small and odd sizes match the float64 reference",
          "[cpu][reference]") {
  std::mt19937_64 rng(31);
  auto pick = [&](int64_t lo, int64_t hi) { return lo + int64_t(rng() % uint64_t(hi - lo + 1)); };
  int built = 0;
  while (built < 80) {
    const int64_t K = built % 2 ? 5 : 3;
    const int64_t C = pick(2, 5), mult = pick(1, 2), stride = pick(1, 2), H = pick(1, 13), W = pick(1, 13);
    const std::vector<int64_t> pads = {pick(0, K - 1), pick(0, K - 1), pick(0, K - 1), pick(0, K - 1)};
    if (H + pads[0] + pads[2] < K || W + pads[1] + pads[3] < K) continue;
    check_depthwise({2, C, H, W}, mult, K, stride, pads, rng);
    ++built;
  }
}

TEST_CASE("depthwise 3x3 and 5x5 convs on planes wider than a vector of 16 match the float64 reference",
          "[cpu][reference]") {
  // The padded path computes rows in runs of 16 columns and drops those past
  // the plane; these planes end mid-run, on a run, and span several runs.
  std::mt19937_64 rng(47);
  auto pick = [&](int64_t lo, int64_t hi) { return lo + int64_t(rng() % uint64_t(hi - lo + 1)); };
  int built = 0;
  while (built < 24) {
    const int64_t K = built % 2 ? 5 : 3, stride = (built / 2) % 2 ? 2 : 1;
    const int64_t C = pick(3, 20), H = pick(K, 40), W = pick(14, 70);
    const int64_t p = (K - 1) / 2;
    const std::vector<int64_t> pads =
        built % 3 == 0 ? std::vector<int64_t>{pick(0, K - 1), pick(0, K - 1), pick(0, K - 1), pick(0, K - 1)}
                       : std::vector<int64_t>{p, p, p, p};
    check_depthwise({3, C, H, W}, 1, K, stride, pads, rng);
    ++built;
  }
}

TEST_CASE(
    "depthwise 3x3 and 5x5 convs on 7x7 and 14x14 planes (16 channels in the lanes) match the float64 "
    "reference",
    "[cpu][reference]") {
  // Output planes at most 8 wide take the channel-interleaved path (14 wide
  // the padded one): blocks of 16 channels, the last one partial; planes of 1
  // to 8 columns, 16-pixel runs ending mid-plane; a channel multiplier of 2;
  // the epilogues (BN, Relu, Clip, Swish) applied per lane.
  std::mt19937_64 rng(61);
  auto pick = [&](int64_t lo, int64_t hi) { return lo + int64_t(rng() % uint64_t(hi - lo + 1)); };
  const int64_t channels[] = {1, 5, 16, 17, 24, 33, 40};
  int built = 0;
  while (built < 40) {
    const int64_t K = built % 2 ? 5 : 3, stride = (built / 2) % 2 ? 2 : 1;
    const int64_t side = built % 5 == 0         ? pick(1, 8) * stride
                         : (built / 4) % 3 == 2 ? 14 * stride
                                                : 7 * stride;
    const int64_t C = channels[built % 7], mult = built % 9 == 4 ? 2 : 1;
    const int64_t p = (K - 1) / 2;
    const std::vector<int64_t> pads =
        built % 6 == 5 ? std::vector<int64_t>{pick(0, K - 1), pick(0, K - 1), pick(0, K - 1), pick(0, K - 1)}
                       : std::vector<int64_t>{p, p, p, p};
    if (side + pads[0] + pads[2] < K || side + pads[1] + pads[3] < K) continue;
    GraphMaker m;
    m.input("x", {2, C, side, side});
    m.constant("W", {C * mult, 1, K, K}, cpu_test::random_floats(size_t(C * mult * K * K), rng()));
    frugal::Node& n = m.node("Conv", {"x", "W"}, "y");
    n.set_attr_int("group", C);
    n.set_attr_ints("strides", {stride, stride});
    n.set_attr_ints("pads", pads);
    std::string out = add_bn_tail(m, rng, "y", C * mult);
    if (built % 3 == 1) {  // Swish, as EfficientNet's: x * Sigmoid(x)
      m.node("Sigmoid", {out}, out + ".sig");
      m.node("Mul", {out, out + ".sig"}, out + ".swish");
      out += ".swish";
    }
    m.output(out);
    std::string detail;
    const double err = compare(m.graph(), rng(), detail, 2);
    INFO(describe(m.graph()) << " -> " << detail);
    CHECK(err <= 1.0);
    ++built;
  }
}

TEST_CASE("GlobalAveragePool over planes of 1 to 3136 values matches the float64 reference",
          "[cpu][reference]") {
  std::mt19937_64 rng(53);
  for (const int64_t side : {1, 3, 4, 7, 14, 17, 56}) {
    GraphMaker m;
    m.input("x", {2, 5, side, side});
    m.node("GlobalAveragePool", {"x"}, "y");
    m.output("y");
    std::string detail;
    const double err = compare(m.graph(), rng(), detail, 2);
    INFO(describe(m.graph()) << " -> " << detail);
    CHECK(err <= 1.0);
  }
}

TEST_CASE("MaxPool and AveragePool on random shapes match the float64 reference", "[cpu][reference]") {
  std::mt19937_64 rng(77);
  auto pick = [&](int64_t lo, int64_t hi) { return lo + int64_t(rng() % uint64_t(hi - lo + 1)); };
  int built = 0;
  while (built < 80) {
    const int r = pick(0, 4) == 0 ? 1 : 2;
    const bool is_max = pick(0, 1) == 1;
    std::vector<int64_t> k(r), s(r), d(r), in(r), pads(2 * r);
    for (int i = 0; i < r; ++i) {
      k[i] = pick(1, 4);
      s[i] = pick(1, 3);
      d[i] = is_max ? pick(1, 2) : 1;
      in[i] = pick(1, 11);
      pads[i] = pick(0, k[i] - 1);
      pads[i + r] = pick(0, k[i] - 1);
    }
    const int64_t ap = pick(0, 6);
    const char* auto_pad = ap == 4 ? "SAME_UPPER" : ap == 5 ? "SAME_LOWER" : ap == 6 ? "VALID" : nullptr;
    const bool ceil_mode = !auto_pad && pick(0, 1) == 1;
    bool fits = true;
    for (int i = 0; i < r; ++i) {
      const int64_t span = (k[i] - 1) * d[i] + 1;
      if ((auto_pad && std::string(auto_pad) == "VALID" ? in[i]
           : auto_pad                                   ? in[i] + span
                                                        : in[i] + pads[i] + pads[i + r]) < span)
        fits = false;
    }
    if (!fits) continue;
    const int64_t N = pick(1, 3), C = pick(1, 4);
    GraphMaker m;
    std::vector<int64_t> xd = {N, C};
    xd.insert(xd.end(), in.begin(), in.end());
    m.input("x", xd);
    frugal::Node& n = m.node(is_max ? "MaxPool" : "AveragePool", {"x"}, "y");
    n.set_attr_ints("kernel_shape", k);
    n.set_attr_ints("strides", s);
    if (is_max) n.set_attr_ints("dilations", d);
    if (auto_pad)
      set_string(n, "auto_pad", auto_pad);
    else
      n.set_attr_ints("pads", pads);
    if (ceil_mode) n.set_attr_int("ceil_mode", 1);
    if (!is_max) n.set_attr_int("count_include_pad", pick(0, 1));
    m.output("y");
    std::string detail;
    const double err = compare(m.graph(), rng(), detail);
    INFO(describe(m.graph()) << " -> " << detail);
    CHECK(err <= 1.0);
    ++built;
  }
}

TEST_CASE("Gemm on random shapes matches the float64 reference", "[cpu][reference]") {
  std::mt19937_64 rng(5);
  auto pick = [&](int64_t lo, int64_t hi) { return lo + int64_t(rng() % uint64_t(hi - lo + 1)); };
  for (int t = 0; t < 60; ++t) {
    const int64_t M = pick(1, 7), K = pick(1, 9), N = pick(1, 8);
    const bool ta = pick(0, 1), tb = pick(0, 1);
    GraphMaker m;
    m.input("a", ta ? std::vector<int64_t>{K, M} : std::vector<int64_t>{M, K});
    const std::vector<int64_t> bd = tb ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N};
    if (pick(0, 3) == 0)
      m.input("b", bd);
    else
      m.constant("b", bd, cpu_test::random_floats(size_t(K * N), rng()));
    std::vector<std::string> ins = {"a", "b"};
    const int64_t c_kind = pick(0, 5);
    const std::vector<std::vector<int64_t>> c_shapes = {{N}, {1, N}, {M, N}, {M, 1}, {}};
    if (c_kind < 5) {
      const std::vector<int64_t>& cd = c_shapes[size_t(c_kind)];
      m.constant("c", cd, cpu_test::random_floats(size_t(numel(cd)), rng()));
      ins.push_back("c");
    }
    frugal::Node& n = m.node("Gemm", ins, "y");
    n.set_attr_int("transA", ta);
    n.set_attr_int("transB", tb);
    if (pick(0, 1)) n.set_attr_float("alpha", float(pick(-20, 20)) / 10.0f);
    if (pick(0, 1)) n.set_attr_float("beta", float(pick(-20, 20)) / 10.0f);
    std::string out = "y";
    if (pick(0, 2) == 0) out = add_bn_tail(m, rng, "y", N);
    m.output(out);
    std::string detail;
    const double err = compare(m.graph(), rng(), detail);
    INFO(describe(m.graph()) << " -> " << detail);
    CHECK(err <= 1.0);
  }
}

TEST_CASE("Gemm on the packed kernel: many rows, features and threads, a row's values whatever the batch",
          "[cpu][reference]") {
  // A constant B with the bias folded: the packed path (output features in the
  // lanes, rows of A in groups of 8). Rows 1..19 (groups of 8 and the rest),
  // features around the blocks (12 on AVX-512, 6 on AVX2) over several blocks
  // and threads, transB both ways, alpha, bias [N] or [1, N], BN and Relu after.
  const char* isa_env = std::getenv("FRUGAL_CPU_MAX_ISA");
  const bool packed_kernel = !(isa_env && std::string(isa_env) == "none") && __builtin_cpu_supports("avx2") &&
                             __builtin_cpu_supports("fma");
  std::mt19937_64 rng(20261128);
  auto pick = [&](int64_t lo, int64_t hi) { return lo + int64_t(rng() % uint64_t(hi - lo + 1)); };
  const int64_t features[] = {1, 5, 12, 13, 40, 100, 1000};
  for (int t = 0; t < 14; ++t) {
    const int64_t N = features[t % 7], K = t == 6 ? 1280 : pick(1, 300), M = t % 2 ? pick(9, 19) : pick(1, 8);
    const bool tb = t % 3 != 0;
    GraphMaker m;
    m.input("x", {M, K}, true);
    const std::vector<int64_t> bd = tb ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N};
    m.constant("b", bd, cpu_test::random_floats(size_t(K * N), rng()));
    std::vector<std::string> ins = {"x", "b"};
    if (t % 4 != 3) {
      const std::vector<int64_t> cd = t % 2 ? std::vector<int64_t>{N} : std::vector<int64_t>{1, N};
      m.constant("c", cd, cpu_test::random_floats(size_t(N), rng()));
      ins.push_back("c");
    }
    frugal::Node& n = m.node("Gemm", ins, "y");
    n.set_attr_int("transB", tb);
    if (t % 5 == 1) n.set_attr_float("alpha", 0.5f);
    if (t % 5 == 2) n.set_attr_float("beta", -1.5f);
    std::string last = "y";
    if (t % 3 == 1) last = add_bn_tail(m, rng, "y", N);
    if (t % 2 == 0) {
      m.node("Relu", {last}, "out");
    } else {
      m.node("Identity", {last}, "out");
    }
    m.output("out");
    INFO("Gemm x=[" << M << "," << K << "] N " << N << " transB " << tb << (isa_env ? " isa " : "")
                    << (isa_env ? isa_env : ""));
    for (const cpu_test::ReferenceRun& r : cpu_test::check_against_reference(m.graph(), {M, K}, rng, 1e-5)) {
      const std::string algo = r.describe["layers"][0]["algorithm"].get<std::string>();
      INFO("threads " << r.threads << ", algorithm " << algo);
      CHECK((algo.find("packed") != std::string::npos) == packed_kernel);
      CHECK(r.ws_bytes == 0);
    }
    // Each row alone gives the bits it gets among all M rows (plans split batches;
    // sgemm, the path without AVX2, does not promise that).
    if (!packed_kernel) continue;
    cpu_test::Executor ex(m.graph(), "{\"threads\": 2}");
    REQUIRE(ex.ok());
    const std::vector<HostTensor> all = exec_test::random_inputs(ex.describe(), M, uint64_t(t));
    std::vector<HostTensor> out_all;
    REQUIRE(ex.run(all, out_all).ok());
    for (int64_t j = 0; j < M; ++j) {
      std::vector<HostTensor> one = all;
      one[0].dims[0] = 1;
      one[0].data.assign(all[0].data.begin() + j * K, all[0].data.begin() + (j + 1) * K);
      std::vector<HostTensor> out_one;
      REQUIRE(ex.run(one, out_one).ok());
      REQUIRE(out_one[0].data.size() == size_t(N));
      INFO("row " << j);
      CHECK(std::memcmp(out_one[0].data.data(), out_all[0].data.data() + j * N, size_t(N) * sizeof(float)) ==
            0);
    }
  }
}

TEST_CASE("MatMul with broadcast batch dims matches the float64 reference", "[cpu][reference]") {
  std::mt19937_64 rng(11);
  auto pick = [&](int64_t lo, int64_t hi) { return lo + int64_t(rng() % uint64_t(hi - lo + 1)); };
  for (int t = 0; t < 40; ++t) {
    const int64_t M = pick(1, 5), K = pick(1, 6), N = pick(1, 5);
    const int ra = int(pick(1, 4)), rb = int(pick(1, 4));
    std::vector<int64_t> batch = {pick(1, 3), pick(1, 3)};
    std::vector<int64_t> ad, bd;
    // Batch dims align from the right, as in numpy.
    for (int i = 0; i < ra - 2; ++i) ad.push_back(pick(0, 1) ? batch[size_t(4 - ra + i)] : 1);
    for (int i = 0; i < rb - 2; ++i) bd.push_back(pick(0, 1) ? batch[size_t(4 - rb + i)] : 1);
    if (ra >= 2) ad.push_back(M);
    ad.push_back(K);
    bd.push_back(K);
    if (rb >= 2) bd.push_back(N);
    GraphMaker m;
    m.input("a", ad);
    if (pick(0, 1))
      m.input("b", bd);
    else
      m.constant("b", bd, cpu_test::random_floats(size_t(numel(bd)), rng()));
    m.node("MatMul", {"a", "b"}, "y");
    m.output("y");
    std::string detail;
    const double err = compare(m.graph(), rng(), detail);
    INFO(describe(m.graph()) << " -> " << detail);
    CHECK(err <= 1.0);
  }
}

TEST_CASE("the ops added through the op registry match the float64 reference", "[cpu][reference]") {
  for (const exec_test::OpCase& c : exec_test::registry_op_cases()) {
    INFO(c.name);
    CHECK(exec_test::check_op_case(c, cpu_test::api()) == "");
  }
}
