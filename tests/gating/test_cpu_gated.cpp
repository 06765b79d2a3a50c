// The CPU executor's gated kernels (kernels/gated_conv.cpp, gated_gemm.cpp)
// against the float64 reference evaluator on the same gated graphs: several
// thresholds including 0 (every kernel on: the dense network) and 1 (every
// kernel off: zeros), both gate forms, per-sample masks that differ inside a
// batch, the Gemm-after-Flatten skip, and the run report's counts.
#include <catch2/catch.hpp>
#include <cmath>
#include <sstream>
#include <string>
#include <vector>

#include "cpu_plugin.h"
#include "frugal/model/onnx_export.h"
#include "gated_graphs.h"
#include "gating/gate_insert.h"
#include "graph_helpers.h"
#include "reference.h"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;
using cpu_test::HostTensor;
using gate_test::gated_graph;
using gate_test::GatedGraphOptions;

namespace {

struct Outcome {
  double worst = 0;  // largest error over the tolerance 1e-5 + 1e-4 |ref| (<= 1 passes)
  std::string detail;
  nlohmann::json report;
  frugal::RefTensor mask;  // the reference's switches [N, K, 1, 1]
  frugal::RefValues all;   // every value of the reference run
};

// Input x [n, C, H, W]: uniform noise plus an offset per sample and channel, so
// that the pooled values, and the switches, differ between samples.
HostTensor gate_input(const GatedGraphOptions& o, int64_t n, uint64_t seed) {
  HostTensor x{"x", {n, o.channels, o.size, o.size}, {}};
  x.data = cpu_test::random_floats(size_t(n * o.channels * o.size * o.size), seed);
  const std::vector<float> offsets = cpu_test::random_floats(size_t(n * o.channels), seed + 1, -1.5f, 1.5f);
  const int64_t plane = o.size * o.size;
  for (size_t i = 0; i < x.data.size(); ++i) x.data[i] += offsets[i / size_t(plane)];
  return x;
}

// The executor options to test: `always`, plus `onednn` (options that force
// the oneDNN conv path) where the build has oneDNN. The sanitizer build leaves
// oneDNN out (CMakeLists.txt), and there an executor forced onto it is refused.
std::vector<std::string> with_onednn(std::vector<std::string> always,
                                     const std::vector<std::string>& onednn) {
#ifdef FRUGAL_HAVE_DNNL
  always.insert(always.end(), onednn.begin(), onednn.end());
#else
  (void)onednn;
#endif
  return always;
}

Outcome run_both(const frugal::Graph& g, const HostTensor& x,
                 const std::string& options = "{\"threads\": 2}") {
  Outcome r;
  frugal::RefValues in;
  in["x"] = cpu_test::ref_of(x.dims, x.data);
  const frugal::RefValues all = frugal::reference_run_all(g, in);
  if (all.count("g_mask")) r.mask = all.at("g_mask");
  r.all = all;
  const frugal::RefTensor& want = all.at("y");
  cpu_test::Executor ex(g, options);
  REQUIRE(ex.ok());
  std::vector<HostTensor> out;
  const cpu_test::Status st = ex.run({x}, out, nullptr, &r.report);
  REQUIRE(st.ok());
  REQUIRE(out.size() == 1);
  REQUIRE(out[0].dims == want.dims);
  for (size_t i = 0; i < want.data.size(); ++i) {
    const double e =
        std::fabs(double(out[0].data[i]) - want.data[i]) / (1e-5 + 1e-4 * std::fabs(want.data[i]));
    if (e > r.worst) {
      r.worst = e;
      std::ostringstream s;
      s << "element " << i << ": got " << out[0].data[i] << ", want " << want.data[i];
      r.detail = s.str();
    }
  }
  return r;
}

double mask_mean(const frugal::RefTensor& m) {
  double on = 0;
  for (double v : m.data) on += v;
  return on / double(m.data.size());
}

// Whether two samples of the batch have different switches.
bool masks_differ(const frugal::RefTensor& m) {
  const size_t per = m.data.size() / size_t(m.dims[0]);
  for (size_t s = 1; s < size_t(m.dims[0]); ++s)
    for (size_t k = 0; k < per; ++k)
      if (m.data[s * per + k] != m.data[k]) return true;
  return false;
}

const nlohmann::json& gate_entry(const nlohmann::json& report, const std::string& layer) {
  for (const nlohmann::json& e : report.at("gates"))
    if (e.at("layer") == layer) return e;
  FAIL("no gate entry for layer " << layer << " in " << report.dump());
  static nlohmann::json none;
  return none;
}

// gated_graph(o) against the reference at each threshold under each executor option string,
// on a batch of 6 from `seed`: within the tolerance, the samples' masks different at 0.5, and
// the reported activity the reference's.
void check_thresholds(GatedGraphOptions o, const std::vector<std::string>& options_list,
                      const std::vector<float>& thresholds, uint64_t seed) {
  for (const std::string& options : options_list)
    for (float t : thresholds) {
      o.threshold = t;
      INFO(options << " threshold " << t);
      const Outcome r = run_both(gated_graph(o), gate_input(o, 6, seed), options);
      INFO(r.detail);
      CHECK(r.worst <= 1.0);
      if (t == 0.5f) CHECK(masks_differ(r.mask));
      CHECK(gate_entry(r.report, "conv1").at("activity").get<double>() == Approx(mask_mean(r.mask)));
    }
}

// 40 kernels over 20 channels on 11 x 11 planes: samples with most of their kernels on take
// the dense conv, the others the reduced conv.
GatedGraphOptions forty_kernels() {
  GatedGraphOptions o;
  o.channels = 20;
  o.kernels = o.gate_channels = 40;
  o.size = 11;
  return o;
}

}  // namespace

TEST_CASE("cpu gated: equals the float64 reference at every threshold, both forms", "[gating][cpu]") {
  for (bool pool_first : {false, true}) {
    for (bool strict : {false, true}) {
      for (float t : {0.0f, 0.3f, 0.5f, 0.7f, 1.0f}) {
        GatedGraphOptions o;
        o.pool_first = pool_first;
        o.strict = strict;
        o.threshold = t;
        INFO("pool_first " << pool_first << " strict " << strict << " threshold " << t);
        const int64_t n = 6;
        const Outcome r = run_both(gated_graph(o), gate_input(o, n, 5));
        INFO(r.detail);
        CHECK(r.worst <= 1.0);
        const nlohmann::json& conv = gate_entry(r.report, "conv1");
        CHECK(conv.at("gated") == true);
        CHECK(conv.at("samples") == n);
        CHECK(conv.at("kernels") == n * o.kernels);
        CHECK(conv.at("activity").get<double>() == Approx(mask_mean(r.mask)));
        if (t == 0.0f && !strict) CHECK(conv.at("activity") == 1.0);  // sw >= 0 always
        if (t == 1.0f) CHECK(conv.at("activity") == 0.0);             // sw < 1 for these gates
        CHECK(gate_entry(r.report, "conv2").at("skips_off_channels") == true);
        const int64_t dense = conv.at("dense_macs"), effective = conv.at("effective_macs");
        if (mask_mean(r.mask) < 1.0) CHECK(effective < dense);
      }
    }
  }
}

TEST_CASE("cpu gated: per-sample masks differ inside a batch, one thread and two", "[gating][cpu]") {
  GatedGraphOptions o;
  o.kernels = o.gate_channels = 16;
  o.size = 9;
  for (const char* options : {"{\"threads\": 1}", "{\"threads\": 2}"}) {
    const Outcome r = run_both(gated_graph(o), gate_input(o, 8, 11), options);
    INFO(options << " " << r.detail);
    CHECK(masks_differ(r.mask));
    const double activity = mask_mean(r.mask);
    CHECK((activity > 0.2 && activity < 0.8));
    CHECK(r.worst <= 1.0);
  }
}

TEST_CASE("cpu gated: a Gemm right after the gate skips the off channels' columns, in groups of samples",
          "[gating][cpu]") {
  // Batches of 5 and 11: one group of samples reading their rows together, and two (8 and 3).
  for (float t : {0.0f, 0.5f, 1.0f})
    for (int64_t n : {5, 11}) {
      GatedGraphOptions o;
      o.second_conv = false;  // Mul -> MaxPool -> Flatten -> Gemm
      o.threshold = t;
      INFO("threshold " << t << " batch " << n);
      const Outcome r = run_both(gated_graph(o), gate_input(o, n, 3));
      INFO(r.detail);
      CHECK(r.worst <= 1.0);
      const nlohmann::json& gemm = gate_entry(r.report, "y");
      CHECK(gemm.at("skips_off_channels") == true);
      // Effective MACs: the 9 columns of each channel that is not all zero (off,
      // or on with every value cut by the Relu), per sample, times 4 outputs.
      const int64_t nonzero = gate_test::nonzero_blocks(r.all.at("flat").data, 9);
      // The active columns (as gated convs count, and the Vulkan executor); at threshold 0
      // every kernel is on, and some channels are all zero after the Relu all the same.
      CHECK(gemm.at("effective_macs") == nonzero * 9 * 4);
      if (t == 0.0f) CHECK(nonzero < n * 8);
      double on = 0;
      for (double v : r.mask.data) on += v;
      CHECK(nonzero <= int64_t(on));
    }
}

TEST_CASE("cpu gated: the executor's gate_threshold replaces the model's", "[gating][cpu]") {
  GatedGraphOptions o;
  const HostTensor x = gate_input(o, 4, 9);
  for (float t : {0.0f, 1.0f, 0.25f}) {
    GatedGraphOptions want = o;
    want.threshold = t;
    frugal::RefValues in;
    in["x"] = cpu_test::ref_of(x.dims, x.data);
    const frugal::RefTensor ref = frugal::reference_run(gated_graph(want), in).at("y");
    cpu_test::Executor ex(gated_graph(o), "{\"gate_threshold\": " + std::to_string(t) + "}");
    REQUIRE(ex.ok());
    std::vector<HostTensor> out;
    nlohmann::json report;
    REQUIRE(ex.run({x}, out, nullptr, &report).ok());
    double worst = 0;
    for (size_t i = 0; i < ref.data.size(); ++i)
      worst =
          std::max(worst, std::fabs(out[0].data[i] - ref.data[i]) / (1e-5 + 1e-4 * std::fabs(ref.data[i])));
    CHECK(worst <= 1.0);
    CHECK(gate_entry(report, "conv1").at("threshold").get<double>() == Approx(t));
  }
  cpu_test::Executor bad(gated_graph(o), "{\"gate_threshold\": 1.5}");
  CHECK(!bad.ok());
  CHECK_THAT(bad.created.message, Contains("'gate_threshold' must be a number in [0, 1]"));
}

TEST_CASE("cpu gated: near misses run densely and equal the reference; a channel mismatch is refused clearly",
          "[gating][cpu]") {
  for (int which = 0; which < 3; ++which) {
    GatedGraphOptions o;
    if (which == 0) o.mul_before_bn = true;
    if (which == 1) o.threshold = 1.5f;  // outside [0, 1]: every switch off, densely
    if (which == 2) o.soft = true;
    INFO("case " << which);
    const Outcome r = run_both(gated_graph(o), gate_input(o, 3, 4));
    INFO(r.detail);
    CHECK(r.worst <= 1.0);
    CHECK(!r.report.contains("gates"));
  }
  GatedGraphOptions o;
  o.gate_channels = 4;  // [N, 8, H, W] * [N, 4, 1, 1] does not broadcast
  cpu_test::Executor ex(gated_graph(o), "");
  CHECK(!ex.ok());
  CHECK_THAT(ex.created.message, Contains("gate_mul"));
}

TEST_CASE("cpu gated: the gated layer counts its workspace and describes its gate", "[gating][cpu]") {
  GatedGraphOptions o;
  cpu_test::Executor ex(gated_graph(o), "");
  REQUIRE(ex.ok());
  const nlohmann::json d = ex.describe();
  bool found = false;
  for (size_t l = 0; l < d.at("layers").size(); ++l) {
    const nlohmann::json& L = d.at("layers")[l];
    if (L.at("name") != "conv1") continue;
    found = true;
    CHECK(L.at("gate").at("kernels") == 8);
    CHECK(L.at("gate").at("macs_per_sample") == 8 * 6);
    CHECK(L.at("output_tensor") == "gate_mul");
    // Gathered weights [8, 54] at least, whatever the activity.
    CHECK(ex.layer_bytes(int(l), 1).ws_bytes >= 8 * 54 * 4);
    // Whole 64-byte lines, as the arena places chunks (a gap below a chunk it put at the top of its
    // block made a workspace that ended short of a line not fit, and the arena moved chunks).
    for (int64_t n : {1, 3}) CHECK(ex.layer_bytes(int(l), n).ws_bytes % 64 == 0);
  }
  CHECK(found);
}

TEST_CASE("cpu gated: describe() names both paths of the gated layers", "[gating][cpu]") {
  // The dense path is the conv the same layer takes without a gate (a soft gate runs densely),
  // from a share of the kernel x channel pairs that depends on the conv's steps and plane.
  GatedGraphOptions o, soft;
  soft.soft = true;
  auto layer = [](const nlohmann::json& d, const std::string& name) {
    for (const nlohmann::json& L : d.at("layers"))
      if (L.at("name") == name) return L;
    FAIL("no layer " << name << " in " << d.dump());
    return nlohmann::json();
  };
  for (const std::string options : {"{\"threads\": 2}", "{\"threads\": 2, \"conv\": \"blas\"}"}) {
    INFO(options);
    cpu_test::Executor gated(gated_graph(o), options), dense(gated_graph(soft), options);
    REQUIRE(gated.ok());
    REQUIRE(dense.ok());
    const nlohmann::json g = gated.describe(), d = dense.describe();
    // The reduced conv: the indexed tiles on the widest instruction set the process allows.
    const std::string reduced = "indexed tiles on the active kernels x channels (";
    // conv1 has 6 x 9 = 54 steps (under 64: from 0.4), conv2 8 x 9 over a 3 x 3 plane (0.9).
    CHECK_THAT(layer(g, "conv1").at("algorithm").get<std::string>(),
               StartsWith("gated: " + layer(d, "conv1").at("algorithm").get<std::string>() +
                          " from 0.4 of the kernel x channel pairs, else " + reduced));
    CHECK_THAT(
        layer(g, "conv2").at("algorithm").get<std::string>(),
        StartsWith("skipping off input channels: " + layer(d, "conv2").at("algorithm").get<std::string>() +
                   " from 0.9 of the kernel x channel pairs, else " + reduced));
  }
  GatedGraphOptions gemm;
  gemm.second_conv = false;  // Mul -> MaxPool -> Flatten -> Gemm: the Gemm is the consumer
  for (const std::string options : {"", "{\"conv\": \"blas\"}"}) {
    INFO(options);
    cpu_test::Executor ex(gated_graph(gemm), options);
    REQUIRE(ex.ok());
    CHECK(
        layer(ex.describe(), "y").at("algorithm") ==
        "skipping off input channels: per group of up to 8 samples, the rows of the input blocks nonzero in "
        "any of them shared out over the threads, each row read once");
  }
}

TEST_CASE("cpu gated: a plan that runs the gated layers one sample at a time gives the same bits",
          "[gating][cpu]") {
  GatedGraphOptions o;
  o.kernels = o.gate_channels = 24;  // >= 16 kernels: the gated conv's dense conv may take oneDNN
  const HostTensor x = gate_input(o, 4, 21);
  const std::vector<std::string> paths =
      with_onednn({"{\"threads\": 1}"},
                  {"{\"threads\": 1, \"conv\": \"onednn\"}", "{\"threads\": 2, \"conv\": \"onednn\"}"});
  const std::string options = GENERATE_COPY(from_range(paths));
  INFO(options);
  cpu_test::Executor ex(gated_graph(o), options);
  REQUIRE(ex.ok());
  cpu_test::MemoryModel mm(ex);
  std::vector<HostTensor> whole, split;
  REQUIRE(ex.run({x}, whole).ok());
  std::vector<cpu_test::Step> steps;
  const size_t layers = mm.description()["layers"].size();
  for (int64_t s = 0; s < 4; ++s)  // every layer but the final Gemm one sample at a time
    for (size_t l = 0; l + 1 < layers; ++l) steps.push_back({int(l), s, 1});
  steps.push_back({int(layers - 1), 0, 4});
  nlohmann::json report;
  REQUIRE(ex.run({x}, split, cpu_test::MemoryModel::to_json(steps, mm.description()), &report).ok());
  REQUIRE(whole[0].data.size() == split[0].data.size());
  CHECK(whole[0].data == split[0].data);
  CHECK(gate_entry(report, "conv1").at("samples") == 4);
  CHECK(report.at("peak_bytes") == mm.peak(steps, 4));  // the gated layers' memory as the model counts it
}

TEST_CASE("cpu gated: every conv path (oneDNN, OpenBLAS) equals the reference with per-sample masks",
          "[gating][cpu]") {
  // 40 kernels over 20 channels: samples with most of their kernels on take the
  // dense conv (oneDNN with "conv": "onednn", OpenBLAS with "blas") then zero
  // their off channels, the others the reduced conv on the indexed tiles; the consumer conv
  // skips the off channels as inputs.
  check_thresholds(
      forty_kernels(),
      with_onednn({"{\"threads\": 2, \"conv\": \"blas\"}", "{\"threads\": 2}"},
                  {"{\"threads\": 2, \"conv\": \"onednn\"}", "{\"threads\": 1, \"conv\": \"onednn\"}"}),
      {0.0f, 0.4f, 0.5f, 0.6f, 1.0f}, 31);
}

TEST_CASE("cpu gated: runs of samples on the dense conv share one call, reduced samples between them",
          "[gating][cpu]") {
  // A batch picked from candidates by the reference's masks: samples with most kernels on (the
  // dense conv from 0.7 of the pairs here, consecutive ones in one call) around samples with
  // fewer on (the reduced conv), the pattern on, on, few, on, on, on, few, on.
  GatedGraphOptions o = forty_kernels();
  o.gate_bias = 1.0f;  // about 0.6 of the kernels on, some samples 0.75 and more, some 0.55 and less
  const frugal::Graph g = gated_graph(o);
  const int64_t candidates = 48, plane = o.channels * o.size * o.size;
  const HostTensor pool = gate_input(o, candidates, 41);
  frugal::RefValues in;
  in["x"] = cpu_test::ref_of(pool.dims, pool.data);
  const frugal::RefTensor mask = frugal::reference_run_all(g, in).at("g_mask");
  std::vector<int64_t> on, few;
  for (int64_t s = 0; s < candidates; ++s) {
    double sum = 0;
    for (int64_t k = 0; k < o.kernels; ++k) sum += mask.data[size_t(s * o.kernels + k)];
    if (sum >= 0.75 * double(o.kernels)) on.push_back(s);
    if (sum <= 0.55 * double(o.kernels)) few.push_back(s);
  }
  INFO(on.size() << " samples with 0.75 of the kernels on, " << few.size() << " with 0.55 or less");
  REQUIRE(on.size() >= 6);
  REQUIRE(few.size() >= 2);
  const std::vector<int64_t> pick = {on[0], on[1], few[0], on[2], on[3], on[4], few[1], on[5]};
  HostTensor x{"x", {int64_t(pick.size()), o.channels, o.size, o.size}, {}};
  for (int64_t s : pick)
    x.data.insert(x.data.end(), pool.data.begin() + s * plane, pool.data.begin() + (s + 1) * plane);
  const std::vector<std::string> paths =
      with_onednn({"{\"threads\": 1}", "{\"threads\": 2}"}, {"{\"threads\": 2, \"conv\": \"onednn\"}"});
  for (const std::string& options : paths) {
    const Outcome r = run_both(g, x, options);
    INFO(options << " " << r.detail);
    CHECK(r.worst <= 1.0);
  }
}

TEST_CASE("cpu gated: the reduced conv's arranged input: strides, uneven pads, dilations, other kernels",
          "[gating][cpu]") {
  // The reduced conv reads each tap as a shifted row of the active channels' phase planes
  // (kernels/gated_conv.cpp, arrange_taps): geometries beyond 3x3 / 1 / 1. Thresholds put
  // samples on both paths (below 0.6 of the pairs the reduced one); CMake runs this file
  // again with the tiles held to AVX2 and to plain loops.
  struct Geometry {
    std::vector<int64_t> shape, strides, pads, dilations;
  };
  const std::vector<Geometry> cases = {
      {{3, 3}, {2, 2}, {1, 1, 1, 1}, {1, 1}},  // resnet's downsampling conv
      {{5, 5}, {1, 1}, {2, 1, 0, 2}, {1, 1}},  // uneven pads
      {{3, 3}, {1, 1}, {2, 2, 2, 2}, {2, 2}},  // dilated
      {{3, 2}, {2, 1}, {0, 1, 1, 0}, {1, 1}},  // other strides and kernel per axis
      {{1, 1}, {2, 2}, {0, 0, 0, 0}, {1, 1}},  // phase planes as wide as the output
      {{3, 3}, {3, 3}, {1, 1, 1, 1}, {1, 2}},  // stride above the kernel's reach, dilated columns
  };
  for (const Geometry& c : cases) {
    GatedGraphOptions o;
    o.channels = 10;
    o.kernels = o.gate_channels = 20;
    o.size = 13;
    o.conv1_shape = c.shape;
    o.conv1_strides = c.strides;
    o.conv1_pads = c.pads;
    o.conv1_dilations = c.dilations;
    INFO("kernel " << c.shape[0] << "x" << c.shape[1] << " stride " << c.strides[0] << "x" << c.strides[1]
                   << " dilation " << c.dilations[0] << "x" << c.dilations[1]);
    check_thresholds(o, {"{\"threads\": 2}", "{\"threads\": 1}"}, {0.0f, 0.5f, 0.7f, 1.0f}, 23);
  }
}

TEST_CASE(
    "cpu gated: the reduced conv as Winograd F(2x2, 3x3) and F(4x4, 3x3): blocks in parallel, odd edges",
    "[gating][cpu]") {
  // 3x3 stride-1 convs take Winograd on the reduced path (kernels/gated_winograd.h) from 16
  // active input channels: F(4x4, 3x3) where its tiles make at least two blocks of tile rows per
  // thread, else F(2x2, 3x3) on planes of 100-256 tiles as one block (its phases shared out) or
  // in blocks. On two threads 28 x 28 takes F(2x2, 3x3) as one block of 196 tiles, 33 x 33 in 6
  // blocks of 3 tile rows (odd: the last tiles' second row and column fall outside), 53 x 53
  // F(4x4, 3x3) (14 tile rows in 4 blocks; the last tiles' last three rows and columns
  // outside); on one thread 28 x 28 keeps F(2x2, 3x3) (F(4x4, 3x3) would be one block), 33 x 33
  // takes F(4x4, 3x3) (2 blocks of 7 tile rows). conv2 after the pool (on 14 x 14 to 26 x 26)
  // keeps the direct tiles or takes F(2x2, 3x3). (At 55 x 55 and 57 x 57 the dense conv at
  // threshold 0, oneDNN's Winograd, misses this file's tolerance by 2.2 x.)
  struct Case {
    int64_t size;
    std::string two_threads, one_thread;
  };
  const std::vector<Case> cases = {{28, "F(2x2, 3x3)", "F(2x2, 3x3)"},
                                   {33, "F(2x2, 3x3)", "F(4x4, 3x3)"},
                                   {53, "F(4x4, 3x3)", "F(4x4, 3x3)"}};
  for (const auto& [size, two_threads, one_thread] : cases) {
    GatedGraphOptions o;
    o.channels = 24;
    o.kernels = o.gate_channels = 20;
    o.size = size;
    INFO("plane " << size << "x" << size);
    for (const auto& [options, want] : {std::pair<std::string, std::string>{"{\"threads\": 2}", two_threads},
                                        {"{\"threads\": 1}", one_thread}}) {
      cpu_test::Executor ex(gated_graph(o), options);
      REQUIRE(ex.ok());
      const nlohmann::json described = ex.describe();  // kept: the loop reads into it
      for (const nlohmann::json& L : described.at("layers"))
        if (L.at("name") == "conv1")
          CHECK_THAT(L.at("algorithm").get<std::string>(), Contains("Winograd " + want));
    }
    check_thresholds(o, {"{\"threads\": 2}", "{\"threads\": 1}"}, {0.0f, 0.5f, 0.7f, 1.0f}, 29);
  }
}

TEST_CASE("cpu gated: 1x1 convs whose dense conv is the packed kernel, both paths, per-sample masks",
          "[gating][cpu]") {
  // 1x1 convs run the packed register tiles densely (on AVX2 and AVX-512), and a gated one
  // with 24 steps takes them from 0.4 of its kernel x channel pairs: the thresholds below put
  // samples on both sides of that share, and the Relu before the Mul leaves some input
  // channels of conv2 all zero.
  GatedGraphOptions o;
  o.kernel = 1;
  o.channels = 24;
  o.kernels = o.gate_channels = 32;
  o.size = 12;
  check_thresholds(o, {"{\"threads\": 2}", "{\"threads\": 1}"}, {0.0f, 0.3f, 0.45f, 0.5f, 0.6f, 1.0f}, 17);
  cpu_test::Executor ex(gated_graph([] {
                          GatedGraphOptions o;
                          o.kernel = 1;
                          return o;
                        }()),
                        "{}");
  REQUIRE(ex.ok());
  const nlohmann::json described = ex.describe();  // kept: the loop reads into it
  for (const nlohmann::json& L : described.at("layers"))
    if (L.at("name") == "conv1" && L.at("algorithm").get<std::string>().find("packed") != std::string::npos)
      CHECK_THAT(L.at("algorithm").get<std::string>(), Contains("from 0.4 of the kernel x channel pairs"));
}

TEST_CASE("cpu gated: a gated conv that is also a gate's consumer pools and skips exactly", "[gating][cpu]") {
  // conv1 gated -> MaxPool -> conv2, gated too (frugal gate's form): conv2's one pass over its
  // input gives both the pooled vector of its gate and the all-zero channels it skips. Planes of
  // 11 x 11 (121 values: the pass's 32-value blocks, its 8-value blocks and single values).
  for (float t : {0.0f, 0.5f, 1.0f}) {
    GatedGraphOptions o;
    o.size = 22;
    o.kernels = o.gate_channels = 12;
    o.threshold = t;
    frugal::Graph g = gated_graph(o);
    const std::vector<frugal::InsertedGate> gates = frugal::insert_gates(g, {"conv2"}, 3, t);
    REQUIRE(gates.size() == 1);
    INFO("threshold " << t);
    const int64_t n = 6;
    const Outcome r = run_both(g, gate_input(o, n, 17));
    INFO(r.detail);
    CHECK(r.worst <= 1.0);
    if (t == 0.5f) CHECK(masks_differ(r.mask));
    const nlohmann::json& conv2 = gate_entry(r.report, "conv2");
    CHECK(conv2.at("gated") == true);
    CHECK(conv2.at("skips_off_channels") == true);
    // The reference's own values: conv2's switches (sigmoid(z) against t) and, per sample, its input
    // channels that are not all zero; effective MACs: the gate's 1x1 (5 x 12) and the active pairs.
    const frugal::RefTensor& z = r.all.at(gates[0].z);
    const frugal::RefTensor& in = r.all.at("pool");
    REQUIRE(z.data.size() == size_t(n * 5));
    const int64_t plane = 11 * 11;
    int64_t on_total = 0, want_macs = 0, skipped = 0;
    for (int64_t s = 0; s < n; ++s) {
      int64_t on = 0, active = 0;
      for (int64_t k = 0; k < 5; ++k) on += 1.0 / (1.0 + std::exp(-z.data[size_t(s * 5 + k)])) >= t;
      for (int64_t c = 0; c < 12; ++c) {
        bool any = false;
        for (int64_t i = 0; i < plane; ++i) any = any || in.data[size_t((s * 12 + c) * plane + i)] != 0.0;
        active += any;
      }
      skipped += 12 - active;
      on_total += on;
      want_macs += 5 * 12 + on * active * 9 * plane;
    }
    CHECK(conv2.at("kernels_on") == on_total);
    CHECK(conv2.at("effective_macs") == want_macs);
    if (t == 0.5f) CHECK(skipped > 0);  // conv1's off kernels are exact zeros
    if (t == 1.0f) CHECK(on_total == 0);
  }
}

TEST_CASE("cpu gated: a gate of 65536 weights or more, its kernels shared out over the threads",
          "[gating][cpu]") {
  // Such a gate's switches are computed in parts, one per thread, whose lists are then joined
  // (kernels/gated_conv.cpp, gate_on): uneven parts on three threads, even on two, one part on one.
  // Not threshold 1: over 256 channels some gates pass 16.6, where the float32 sigmoid is 1
  // (docs/GATING.md).
  GatedGraphOptions o;
  o.channels = 256;
  o.kernels = o.gate_channels = 301;  // 77056 weights
  o.size = 5;
  check_thresholds(o, {"{\"threads\": 3}", "{\"threads\": 2}", "{\"threads\": 1}"}, {0.0f, 0.5f, 0.7f}, 31);
}
