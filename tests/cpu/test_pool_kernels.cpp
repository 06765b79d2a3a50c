// The cpu executor's MaxPool / AveragePool kernels (plugins/cpu/kernels/pool.cpp)
// on inputs large enough that most outputs take the interior fast path and the
// rest the checked border path: random kernels, strides, dilations, pads,
// auto_pad, ceil_mode and count_include_pad against the float64 reference
// evaluator (MaxPool must match exactly: its output is one of its inputs), and
// MaxPool's NaN handling against a brute-force loop written here. On AVX-512
// MaxPool takes chunks of up to 16 output columns read from 32 input lanes:
// the shapes of the last case put chunk and lane edges at every place a window
// can meet them (under FRUGAL_CPU_MAX_ISA=avx2 the same cases check the other path).
#include <catch2/catch.hpp>
#include <cmath>
#include <limits>
#include <random>
#include <sstream>

#include "cpu_plugin.h"
#include "graph_helpers.h"
#include "reference.h"

using cpu_test::GraphMaker;
using cpu_test::HostTensor;
using cpu_test::numel;

namespace {

void set_auto_pad(frugal::Node& n, const std::string& v) {
  frugal::Attribute a;
  a.name = "auto_pad";
  a.kind = frugal::Attribute::Kind::String;
  a.s = v;
  n.attributes.push_back(a);
}

// Runs a one-input graph through the plugin with `threads` threads.
std::vector<HostTensor> run_plugin(const frugal::Graph& g, const HostTensor& x, int threads) {
  cpu_test::Executor ex(g, "{\"threads\": " + std::to_string(threads) + "}");
  REQUIRE(ex.ok());
  std::vector<HostTensor> out;
  const cpu_test::Status st = ex.run({x}, out);
  INFO(st.message);
  REQUIRE(st.ok());
  REQUIRE(out.size() == 1);
  return out;
}

}  // namespace

TEST_CASE("Pool kernels: interior fast path and borders match the float64 reference", "[cpu][pool]") {
  std::mt19937_64 rng(2024);
  auto pick = [&](int64_t lo, int64_t hi) { return lo + int64_t(rng() % uint64_t(hi - lo + 1)); };
  int built = 0;
  while (built < 60) {
    const int r = pick(0, 5) == 0 ? 1 : 2;
    const bool is_max = pick(0, 1) == 1;
    std::vector<int64_t> k(r), s(r), d(r), in(r), pads(2 * r);
    for (int i = 0; i < r; ++i) {
      k[i] = pick(1, 5);
      s[i] = pick(1, 3);
      d[i] = is_max ? pick(1, 3) : 1;
      in[i] = pick(4, 37);
      pads[i] = pick(0, k[i] - 1);
      pads[i + r] = pick(0, k[i] - 1);
    }
    const int64_t ap = pick(0, 7);
    const char* auto_pad = ap == 5 ? "SAME_UPPER" : ap == 6 ? "SAME_LOWER" : ap == 7 ? "VALID" : nullptr;
    const bool ceil_mode = !auto_pad && pick(0, 1) == 1;
    bool fits = true;
    for (int i = 0; i < r; ++i)
      if (in[i] + pads[i] + pads[i + r] < (k[i] - 1) * d[i] + 1) fits = false;
    if (!fits) continue;
    const int64_t N = pick(1, 3), C = pick(1, 5);
    GraphMaker m;
    std::vector<int64_t> xd = {N, C};
    xd.insert(xd.end(), in.begin(), in.end());
    m.input("x", xd);
    frugal::Node& n = m.node(is_max ? "MaxPool" : "AveragePool", {"x"}, "y");
    n.set_attr_ints("kernel_shape", k);
    n.set_attr_ints("strides", s);
    if (is_max) n.set_attr_ints("dilations", d);
    if (auto_pad)
      set_auto_pad(n, auto_pad);
    else
      n.set_attr_ints("pads", pads);
    if (ceil_mode) n.set_attr_int("ceil_mode", 1);
    const bool include_pad = !is_max && pick(0, 1) == 1;
    if (include_pad) n.set_attr_int("count_include_pad", 1);
    m.output("y");

    const HostTensor x{"x", xd, cpu_test::random_floats(size_t(numel(xd)), rng())};
    frugal::RefValues ref_in;
    ref_in["x"] = cpu_test::ref_of(xd, x.data);
    const frugal::RefTensor want = frugal::reference_run(m.graph(), ref_in).at("y");
    std::ostringstream what;
    what << (is_max ? "MaxPool" : "AveragePool")
         << " x=" << frugal::shape_to_string(m.graph().tensor("x").shape);
    for (int i = 0; i < r; ++i)
      what << " k" << k[i] << " s" << s[i] << " d" << d[i] << " p" << pads[i] << "/" << pads[i + r];
    what << " auto_pad=" << (auto_pad ? auto_pad : "NOTSET") << " ceil=" << ceil_mode
         << " include_pad=" << include_pad;
    INFO(what.str());
    for (int threads : {1, 2}) {
      const HostTensor y = run_plugin(m.graph(), x, threads)[0];
      REQUIRE(y.dims == want.dims);
      double worst = 0.0;
      size_t at = 0;
      for (size_t i = 0; i < want.data.size(); ++i) {
        const double e = std::fabs(double(y.data[i]) - want.data[i]) /
                         (is_max ? 1.0 : 1e-6 + 1e-5 * std::fabs(want.data[i]));
        if (e > worst) worst = e, at = i;
      }
      INFO("threads " << threads << ", element " << at << ": got " << y.data[at] << ", want "
                      << want.data[at]);
      if (is_max)
        CHECK(worst == 0.0);
      else
        CHECK(worst <= 1.0);
    }
    ++built;
  }
}

TEST_CASE("MaxPool: output column chunks and input lanes at every edge match the float64 reference",
          "[cpu][pool]") {
  struct Case {
    int64_t H, W, kh, kw, s, d, pl, pr;
    bool ceil;
  };
  // Widths around 16 and 32 lanes; column spans (kw - 1) * d of 2 to 31 (the
  // widest the 32 lanes hold) and 32 (the generic loop); pads wider than 16 lanes.
  const Case cases[] = {
      {14, 14, 3, 3, 1, 1, 1, 1, false},
      {7, 7, 3, 3, 1, 1, 1, 1, false},
      {5, 15, 3, 3, 1, 1, 1, 1, false},
      {5, 16, 3, 3, 1, 1, 1, 1, false},
      {5, 17, 3, 3, 1, 1, 1, 1, false},
      {4, 31, 3, 3, 2, 1, 1, 1, true},
      {4, 32, 3, 3, 2, 1, 0, 0, true},
      {4, 33, 3, 3, 2, 1, 1, 1, false},
      {6, 47, 3, 3, 2, 1, 0, 1, true},
      {3, 70, 2, 2, 2, 1, 0, 0, false},
      {3, 40, 1, 5, 3, 1, 2, 2, true},
      {3, 50, 2, 16, 1, 2, 15, 15, false},
      {3, 50, 1, 32, 1, 1, 31, 0, false},
      {3, 50, 1, 33, 1, 1, 17, 17, false},
      {9, 20, 5, 3, 1, 1, 2, 1, false},
      {2, 3, 2, 3, 1, 1, 2, 2, false},
      {1, 1, 1, 3, 1, 1, 1, 1, true},
      // 3x3 windows (their own unrolled loop, stride 1 with tap 0 unpermuted):
      // widths around 16 and 32 lanes at strides 1 and 2, no pad, pads 1 and
      // wider, dilated columns, ceil_mode, planes of one and two columns.
      {5, 15, 3, 3, 1, 1, 0, 0, false},
      {5, 16, 3, 3, 1, 1, 0, 0, false},
      {5, 18, 3, 3, 1, 1, 0, 0, false},
      {6, 30, 3, 3, 1, 1, 1, 1, false},
      {6, 31, 3, 3, 1, 1, 0, 1, false},
      {6, 32, 3, 3, 1, 1, 1, 0, false},
      {6, 33, 3, 3, 1, 1, 1, 1, false},
      {7, 48, 3, 3, 1, 1, 0, 0, false},
      {7, 29, 3, 3, 2, 1, 0, 0, true},
      {7, 30, 3, 3, 2, 1, 0, 0, false},
      {8, 31, 3, 3, 2, 1, 0, 0, false},
      {8, 34, 3, 3, 2, 1, 1, 1, true},
      {9, 55, 3, 3, 2, 1, 0, 0, true},
      {9, 62, 3, 3, 2, 1, 1, 1, false},
      {5, 27, 3, 3, 1, 2, 2, 2, false},
      {5, 40, 3, 3, 2, 3, 3, 1, true},
      {4, 13, 3, 3, 2, 1, 0, 0, true},
      {3, 7, 3, 3, 1, 1, 1, 1, true},
      {3, 2, 3, 3, 1, 1, 1, 1, false},
      {4, 1, 3, 3, 2, 1, 1, 1, true},
      {2, 9, 3, 3, 3, 1, 1, 1, true},
  };
  std::mt19937_64 rng(77);
  for (const Case& c : cases) {
    GraphMaker m;
    const std::vector<int64_t> xd = {2, 3, c.H, c.W};
    m.input("x", xd);
    frugal::Node& n = m.node("MaxPool", {"x"}, "y");
    n.set_attr_ints("kernel_shape", {c.kh, c.kw});
    n.set_attr_ints("strides", {c.s, c.s});
    n.set_attr_ints("dilations", {1, c.d});
    n.set_attr_ints("pads", {c.kh / 2, c.pl, c.kh / 2, c.pr});
    if (c.ceil) n.set_attr_int("ceil_mode", 1);
    m.output("y");
    const HostTensor x{"x", xd, cpu_test::random_floats(size_t(numel(xd)), rng())};
    frugal::RefValues ref_in;
    ref_in["x"] = cpu_test::ref_of(xd, x.data);
    const frugal::RefTensor want = frugal::reference_run(m.graph(), ref_in).at("y");
    INFO("x 2x3x" << c.H << "x" << c.W << " k" << c.kh << "x" << c.kw << " s" << c.s << " d1x" << c.d
                  << " pads " << c.kh / 2 << "," << c.pl << "," << c.kh / 2 << "," << c.pr << " ceil "
                  << c.ceil);
    for (int threads : {1, 2}) {
      const HostTensor y = run_plugin(m.graph(), x, threads)[0];
      REQUIRE(y.dims == want.dims);
      size_t wrong = 0;
      for (size_t i = 0; i < want.data.size(); ++i)
        if (double(y.data[i]) != want.data[i]) ++wrong;
      CHECK(wrong == 0);
    }
  }
}

TEST_CASE("MaxPool skips NaN inputs in the interior and at the borders alike", "[cpu][pool]") {
  // 3x3 stride 2 pad 1 (ResNet's stem pool) on 1x2x13x17, with scattered NaNs
  // and one 3x3 block of NaNs that fills an interior window completely; the
  // same at stride 1 (GoogLeNet's branch pools) and with a 2x2 window (the
  // loop for other window sizes).
  struct Case {
    int64_t k, s;
  };
  const Case c = GENERATE(Case{3, 2}, Case{3, 1}, Case{2, 2});
  const int64_t C = 2, H = 13, W = 17, k = c.k, s = c.s, p = 1;
  INFO("k " << k << " s " << s);
  const int64_t Ho = (H + 2 * p - k) / s + 1, Wo = (W + 2 * p - k) / s + 1;
  std::vector<float> v = cpu_test::random_floats(size_t(C * H * W), 99);
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (size_t i = 0; i < v.size(); i += 7) v[i] = nan;
  for (int64_t i = 5; i < 8; ++i)
    for (int64_t j = 7; j < 10; ++j)
      v[size_t(H * W + i * W + j)] = nan;  // channel 1, window of output (3, 4)
  GraphMaker m;
  m.input("x", {1, C, H, W});
  frugal::Node& n = m.node("MaxPool", {"x"}, "y");
  n.set_attr_ints("kernel_shape", {k, k});
  n.set_attr_ints("strides", {s, s});
  n.set_attr_ints("pads", {p, p, p, p});
  m.output("y");
  const HostTensor y = run_plugin(m.graph(), HostTensor{"x", {1, C, H, W}, v}, 1)[0];
  REQUIRE(y.dims == std::vector<int64_t>{1, C, Ho, Wo});
  for (int64_t c = 0; c < C; ++c)
    for (int64_t oh = 0; oh < Ho; ++oh)
      for (int64_t ow = 0; ow < Wo; ++ow) {
        double want = -std::numeric_limits<double>::infinity();  // max over the non-NaN inputs of the window
        for (int64_t i = 0; i < k; ++i)
          for (int64_t j = 0; j < k; ++j) {
            const int64_t ih = oh * s - p + i, iw = ow * s - p + j;
            if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
            const float x = v[size_t((c * H + ih) * W + iw)];
            if (!std::isnan(x) && x > want) want = x;
          }
        const float got = y.data[size_t((c * Ho + oh) * Wo + ow)];
        INFO("channel " << c << " output (" << oh << ", " << ow << ")");
        CHECK(double(got) == want);
      }
  if (k == 3 && s == 2) CHECK(std::isinf(y.data[size_t((1 * Ho + 3) * Wo + 4)]));  // the all-NaN window
}
