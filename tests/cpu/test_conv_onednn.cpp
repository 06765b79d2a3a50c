// The cpu executor's oneDNN convolution path (plugins/cpu/kernels/conv_onednn.h):
// random convs (dense, 1x1, strided, dilated, asymmetric pads, grouped,
// depthwise) with a bias and a BN + activation epilogue, forced onto oneDNN
// (option "conv": "onednn"), at 1 and 2 threads and batches 1 and 3, against the
// float64 reference (at 2 threads a sample's output channels in two slices, run
// side by side at batch 1; at 1 thread blocked layouts from a 14x14 output plane on); its workspace stops
// growing at one slot per thread; a sample's output is bit-identical run alone or in a batch; "auto" takes it
// for a dense 3x3 conv and "blas" never does; and on the zoo toys forced onto
// oneDNN the arena's measured peak equals the plan's and plans that split the
// batch give bit-identical outputs.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>

#include "cpu_plugin.h"
#include "graph_helpers.h"
#include "memory_model.h"
#include "reference.h"
#include "zoo/zoo.h"

using cpu_test::GraphMaker;
using cpu_test::HostTensor;
using cpu_test::MemoryModel;
using cpu_test::numel;

namespace {

struct ConvCase {
  int64_t N, C, H, W, M, k, s, d, group, pt, pl, pb, pr;
  const char* act;  // the activation after BN
};

// Conv(+B) -> BatchNormalization -> act.
GraphMaker conv_graph(const ConvCase& c, std::mt19937_64& rng) {
  GraphMaker m;
  m.input("x", {c.N, c.C, c.H, c.W}, true);
  const std::vector<int64_t> wd = {c.M, c.C / c.group, c.k, c.k};
  m.constant("W", wd, cpu_test::random_floats(size_t(numel(wd)), rng()));
  m.constant("B", {c.M}, cpu_test::random_floats(size_t(c.M), rng()));
  frugal::Node& n = m.node("Conv", {"x", "W", "B"}, "y");
  n.set_attr_ints("kernel_shape", {c.k, c.k});
  n.set_attr_ints("strides", {c.s, c.s});
  n.set_attr_ints("dilations", {c.d, c.d});
  n.set_attr_ints("pads", {c.pt, c.pl, c.pb, c.pr});
  n.set_attr_int("group", c.group);
  auto vals = [&](float lo, float hi) { return cpu_test::random_floats(size_t(c.M), rng(), lo, hi); };
  m.constant("g", {c.M}, vals(-1.5f, 1.5f));
  m.constant("b", {c.M}, vals(-0.5f, 0.5f));
  m.constant("mu", {c.M}, vals(-0.5f, 0.5f));
  m.constant("var", {c.M}, vals(0.2f, 2.0f));
  m.node("BatchNormalization", {"y", "g", "b", "mu", "var"}, "bn");
  const std::string act = c.act;
  if (act == "Clip") {
    m.constant("lo", {}, {0.0f});
    m.constant("hi", {}, {6.0f});
    m.node("Clip", {"bn", "lo", "hi"}, "out");
  } else {
    frugal::Node& a = m.node(act, {"bn"}, "out");
    if (act == "LeakyRelu") a.set_attr_float("alpha", 0.1f);
    if (act == "HardSigmoid") {
      a.set_attr_float("alpha", 0.25f);
      a.set_attr_float("beta", 0.4f);
    }
  }
  m.output("out");
  return m;
}

// A case's graph, a random input and the float64 reference's output.
struct Prepared {
  GraphMaker graph;
  HostTensor x;
  frugal::RefTensor want;
};

Prepared prepare(const ConvCase& c, std::mt19937_64& rng) {
  Prepared p{conv_graph(c, rng), {}, {}};
  const std::vector<int64_t> xd = {c.N, c.C, c.H, c.W};
  p.x = HostTensor{"x", xd, cpu_test::random_floats(size_t(numel(xd)), rng())};
  frugal::RefValues ref_in;
  ref_in["x"] = cpu_test::ref_of(xd, p.x.data);
  p.want = frugal::reference_run(p.graph.graph(), ref_in).at("out");
  return p;
}

// The largest |out - want| / (1e-4 + 1e-4 |want|): within tolerance when at most 1.
double worst_error(const std::vector<float>& out, const frugal::RefTensor& want) {
  double worst = 0.0;
  for (size_t i = 0; i < want.data.size(); ++i)
    worst =
        std::max(worst, std::fabs(double(out[i]) - want.data[i]) / (1e-4 + 1e-4 * std::fabs(want.data[i])));
  return worst;
}

}  // namespace

TEST_CASE("convs forced onto oneDNN match the float64 reference at any batch", "[cpu][conv][onednn]") {
  std::mt19937_64 rng(2718);
  auto pick = [&](int64_t lo, int64_t hi) { return lo + int64_t(rng() % uint64_t(hi - lo + 1)); };
  const char* acts[] = {"Relu", "Clip", "LeakyRelu", "Sigmoid", "HardSigmoid", "HardSwish"};
  std::vector<ConvCase> cases = {
      {3, 32, 20, 20, 48, 3, 1, 1, 1, 1, 1, 1, 1, "Relu"},        // dense 3x3
      {2, 24, 28, 28, 40, 1, 1, 1, 1, 0, 0, 0, 0, "Clip"},        // 1x1 stride 1
      {2, 3, 40, 40, 16, 7, 2, 1, 1, 3, 3, 3, 3, "Relu"},         // stem
      {1, 16, 18, 18, 16, 3, 1, 1, 16, 1, 1, 1, 1, "HardSwish"},  // depthwise
      {2, 32, 10, 10, 48, 3, 1, 1, 1, 1, 1, 1, 1, "Relu"},        // plane under 14x14: oneDNN's own layout
      {2, 40, 15, 13, 24, 3, 1, 1, 1, 0, 0, 1, 1, "Clip"},        // 13x13: just under
      {1, 24, 14, 14, 32, 1, 1, 1, 1, 0, 0, 0, 0, "Relu"},        // 14x14: blocked on one thread too
  };
  for (int t = 0; t < 8; ++t) {
    const int64_t group = pick(0, 3) == 0 ? (pick(0, 1) ? 2 : 0) : 1;
    const int64_t C = group == 0 ? pick(4, 40) : group * pick(3, 40);
    const int64_t g = group == 0 ? C : group;  // 0: depthwise
    const int64_t M = g == C ? C : g * pick(2, 40);
    const int64_t k = pick(1, 5), s = pick(1, 2), d = k > 1 ? pick(1, 2) : 1;
    cases.push_back({pick(2, 3), C, pick(9, 30), pick(9, 30), M, k, s, d, g, pick(0, k - 1), pick(0, k - 1),
                     pick(0, k - 1), pick(0, k - 1), acts[t % 6]});
  }
  for (const ConvCase& c : cases) {
    Prepared p = prepare(c, rng);
    GraphMaker& m = p.graph;
    const HostTensor& x = p.x;
    const frugal::RefTensor& want = p.want;
    std::ostringstream what;
    what << "Conv x=[" << c.N << "," << c.C << "," << c.H << "," << c.W << "] W=[" << c.M << ","
         << c.C / c.group << "," << c.k << "," << c.k << "] s" << c.s << " d" << c.d << " pads " << c.pt
         << "," << c.pl << "," << c.pb << "," << c.pr << " group " << c.group << " " << c.act;
    INFO(what.str());
    for (int threads : {1, 2}) {
      cpu_test::Executor ex(m.graph(),
                            "{\"threads\": " + std::to_string(threads) + ", \"conv\": \"onednn\"}");
      INFO("threads " << threads << ": " << ex.created.message);
      REQUIRE(ex.ok());
      const nlohmann::json desc = ex.describe();
      CHECK_THAT(desc["layers"][0]["algorithm"].get<std::string>(), Catch::StartsWith("oneDNN "));
      // With two threads a dense layer of several channel blocks runs as slices of its output channels.
      if (threads == 2 && c.group == 1 && c.M >= 32)
        CHECK_THAT(desc["layers"][0]["algorithm"].get<std::string>(), Catch::EndsWith("2 slices)"));
      // One thread: blocked output from a 14x14 output plane on, whatever oneDNN would choose.
      const int64_t Ho = (c.H + c.pt + c.pb - c.d * (c.k - 1) - 1) / c.s + 1,
                    Wo = (c.W + c.pl + c.pr - c.d * (c.k - 1) - 1) / c.s + 1;
      if (threads == 1 && c.group == 1 && Ho * Wo >= 196)
        CHECK_THAT(desc["layers"][0]["algorithm"].get<std::string>(), Catch::EndsWith("-> blocked)"));
      CHECK(desc["packed_weights_bytes"].get<uint64_t>() >=
            uint64_t(numel({c.M, c.C / c.group, c.k, c.k})) * 4);
      std::vector<HostTensor> out;
      nlohmann::json report;
      const cpu_test::Status st = ex.run({x}, out, nullptr, &report);
      INFO(st.message);
      REQUIRE(st.ok());
      CHECK(report["peak_bytes"] == report["predicted_peak_bytes"]);
      REQUIRE(out[0].dims == want.dims);
      CHECK(worst_error(out[0].data, want) <= 1.0);
      // One slot per thread that runs samples: the workspace stops growing at `threads` samples.
      CHECK(ex.layer_bytes(0, threads).ws_bytes == ex.layer_bytes(0, 5).ws_bytes);
      CHECK(ex.layer_bytes(0, 1).ws_bytes <= ex.layer_bytes(0, 5).ws_bytes);
      // Each sample alone, whatever the batch: sample 0 of the run is bit-identical to a run on it alone.
      const int64_t sample = numel(x.dims) / c.N;
      const HostTensor x0{
          "x", {1, c.C, c.H, c.W}, std::vector<float>(x.data.begin(), x.data.begin() + sample)};
      std::vector<HostTensor> out0;
      REQUIRE(ex.run({x0}, out0).ok());
      CHECK(std::memcmp(out0[0].data.data(), out[0].data.data(), out0[0].data.size() * sizeof(float)) == 0);
    }
  }
}

TEST_CASE("the conv option picks the path: auto takes oneDNN for a dense 3x3, blas never",
          "[cpu][conv][onednn]") {
  std::mt19937_64 rng(7);
  GraphMaker m = conv_graph({1, 32, 16, 16, 32, 3, 1, 1, 1, 1, 1, 1, 1, "Relu"}, rng);
  cpu_test::Executor a(m.graph(), "{\"threads\": 1}");
  cpu_test::Executor b(m.graph(), "{\"threads\": 1, \"conv\": \"blas\"}");
  REQUIRE(a.ok());
  REQUIRE(b.ok());
  CHECK_THAT(a.describe()["layers"][0]["algorithm"].get<std::string>(), Catch::StartsWith("oneDNN "));
  CHECK(b.describe()["layers"][0]["algorithm"] == "im2col + sgemm");
  CHECK(b.describe()["packed_weights_bytes"] == 0);
  cpu_test::Executor bad(m.graph(), "{\"conv\": \"fast\"}");
  CHECK_THAT(bad.created.message, Catch::Contains("option 'conv'"));
}

TEST_CASE("zoo toys on oneDNN: measured peak equals the plan's, split batches are bit-identical",
          "[cpu][plan][onednn]") {
  for (const char* name : {"toy_branched", "toy_allops"}) {
    INFO(name);
    cpu_test::Executor ex(frugal::build_zoo_model(name, 3), "{\"threads\": 2, \"conv\": \"onednn\"}");
    REQUIRE(ex.ok());
    MemoryModel mm(ex);
    std::mt19937_64 rng(11);
    const int64_t batch = 4;
    const std::vector<HostTensor> in = exec_test::random_inputs(mm.description(), batch, 5);
    const uint64_t whole_peak = mm.peak(mm.whole_batch(batch), batch);
    REQUIRE(ex.set_budget(whole_peak).ok());
    std::vector<HostTensor> whole;
    nlohmann::json report;
    REQUIRE(ex.run(in, whole, nullptr, &report).ok());
    CHECK(report["peak_bytes"].get<uint64_t>() == whole_peak);
    for (int trial = 0; trial < 6; ++trial) {
      const std::vector<cpu_test::Step> steps = mm.random_plan(batch, rng);
      const uint64_t peak = mm.peak(steps, batch);
      REQUIRE(ex.set_budget(peak).ok());
      std::vector<HostTensor> out;
      const nlohmann::json plan = MemoryModel::to_json(steps, mm.description());
      INFO(plan.dump());
      REQUIRE(ex.run(in, out, plan, &report).ok());
      CHECK(report["peak_bytes"].get<uint64_t>() == peak);
      REQUIRE(out[0].data.size() == whole[0].data.size());
      // Every conv runs each sample alone through the same primitive; only the
      // final Gemm and Softmax see the batch, and random plans may split them.
      double worst = 0;
      for (size_t i = 0; i < out[0].data.size(); ++i)
        worst = std::max(worst, double(std::fabs(out[0].data[i] - whole[0].data[i])));
      CHECK(worst <= 1e-5);
    }
    // Everything but the final Gemm one sample at a time, the Gemm on all: bit-identical.
    if (std::string(name) != "toy_branched") continue;
    std::vector<cpu_test::Step> steps;
    const size_t layers = mm.description()["layers"].size();
    for (int64_t s = 0; s < batch; ++s)
      for (size_t l = 0; l + 1 < layers; ++l) steps.push_back({int(l), s, 1});
    steps.push_back({int(layers - 1), 0, batch});
    REQUIRE(ex.set_budget(mm.peak(steps, batch)).ok());
    std::vector<HostTensor> split;
    REQUIRE(ex.run(in, split, MemoryModel::to_json(steps, mm.description())).ok());
    CHECK(std::memcmp(whole[0].data.data(), split[0].data.data(), whole[0].data.size() * sizeof(float)) == 0);
  }
}

namespace {

// oneDNN 2.6 has Winograd kernels on AVX-512 only; ONEDNN_MAX_CPU_ISA may hide them.
bool winograd_expected() {
  const char* isa = std::getenv("ONEDNN_MAX_CPU_ISA");
  return __builtin_cpu_supports("avx512f") && (isa == nullptr || std::string(isa).rfind("AVX512", 0) == 0);
}

}  // namespace

TEST_CASE(
    "winograd: auto puts 3x3 stride-1 convs on oneDNN's Winograd kernels where it has them, off never; "
    "both match the float64 reference",
    "[cpu][conv][onednn]") {
  std::mt19937_64 rng(31);
  // ResNet's shapes scaled down: F(2x2, 3x3) and F(4x4, 3x3) are both among oneDNN's picks.
  const std::vector<ConvCase> cases = {
      {2, 64, 28, 28, 64, 3, 1, 1, 1, 1, 1, 1, 1, "Relu"},
      {2, 128, 14, 14, 128, 3, 1, 1, 1, 1, 1, 1, 1, "Relu"},
      {1, 256, 7, 7, 256, 3, 1, 1, 1, 1, 1, 1, 1, "Relu"},
      {2, 32, 20, 20, 48, 3, 2, 1, 1, 1, 1, 1, 1, "Relu"},  // stride 2: never Winograd
      // GoogLeNet's conv3: on two threads oneDNN may give its channel slices
      // another kernel than F(4x4, 3x3) (CPU-dependent), and then it runs in
      // two row bands, each with a halo row and one of the pads (oneDNN
      // offered F(4x4, 3x3) for none of 57x55, 58x60, 60x52, 59x57).
      {2, 64, 56, 56, 192, 3, 1, 1, 1, 1, 1, 1, 1, "Relu"},
  };
  for (const ConvCase& c : cases) {
    Prepared p = prepare(c, rng);
    GraphMaker& m = p.graph;
    const HostTensor& x = p.x;
    const frugal::RefTensor& want = p.want;
    for (const char* mode : {"auto", "off"})
      for (int threads : {1, 2}) {
        INFO("C " << c.C << " M " << c.M << " " << c.H << "x" << c.W << " stride " << c.s << ", winograd "
                  << mode << ", threads " << threads);
        cpu_test::Executor ex(
            m.graph(), "{\"threads\": " + std::to_string(threads) + ", \"winograd\": \"" + mode + "\"}");
        REQUIRE(ex.ok());
        const nlohmann::json desc = ex.describe();
        CHECK(desc["winograd"] == mode);
        const std::string algo = desc["layers"][0]["algorithm"].get<std::string>();
        INFO(algo);
        const bool wino = algo.find("wino") != std::string::npos;
        CHECK(wino == (std::string(mode) == "auto" && c.s == 1 && winograd_expected()));
        std::vector<HostTensor> out;
        nlohmann::json report;
        REQUIRE(ex.run({x}, out, nullptr, &report).ok());
        CHECK(report["peak_bytes"] == report["predicted_peak_bytes"]);
        CHECK(worst_error(out[0].data, want) <= 1.0);
        const bool bands = algo.find("row bands") != std::string::npos;
        // Row bands only where oneDNN gives the slices another kernel: on the 56x56 plane, and
        // there only on some CPUs (an AMD Zen 5 did; an Intel Xeon with AVX-512 of 2026-11-27
        // gave the slices F(2x2, 3x3) itself).
        if (bands) CHECK(c.M == 192);
        if (!bands) continue;
        // A sample's bits do not depend on the batch it runs in.
        const int64_t per = c.C * c.H * c.W;
        HostTensor x0{"x", {1, c.C, c.H, c.W}, std::vector<float>(x.data.begin(), x.data.begin() + per)};
        std::vector<HostTensor> alone;
        REQUIRE(ex.run({x0}, alone).ok());
        CHECK(std::equal(alone[0].data.begin(), alone[0].data.end(), out[0].data.begin()));
      }
  }
  cpu_test::Executor bad(conv_graph(cases[0], rng).graph(), "{\"winograd\": \"f23\"}");
  CHECK_THAT(bad.created.message, Catch::Contains("option 'winograd' must be \"auto\" or \"off\""));
}
