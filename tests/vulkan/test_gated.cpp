// Gated models (docs/GATING.md) on the Vulkan executor, which computes each
// gate on the device and runs only the switched-on kernels: equal to the
// float64 reference at thresholds 0 (every kernel on), 0.3, 0.5, 0.7 and 1
// (every kernel off), both gate forms, GreaterOrEqual and Greater; per-sample
// masks that differ inside a batch; a Gemm right after the gate (skipping the
// columns of channels that are all zero); the
// gate_threshold option; plans that split the batch of a gated layer; the run
// report's activity against the reference's mask and the effective MACs of the
// gated conv and of its consumer conv, which skips the input channels that are
// all zero. The validation layer must report nothing.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include "gated_graphs.h"
#include "vk_test_util.h"

using Catch::Matchers::Contains;
using gate_test::gated_graph;
using gate_test::GatedGraphOptions;

namespace {

// Input x [n, C, H, W]: uniform noise plus an offset per sample and channel, so
// that the pooled values, and the switches, differ between samples.
frugal::RefTensor gate_input(const GatedGraphOptions& o, int64_t n, uint64_t seed) {
  frugal::RefTensor x = frugal::random_ref_tensor({n, o.channels, o.size, o.size}, seed);
  const std::vector<float> offsets = vk_test::random_floats(size_t(n * o.channels), seed + 1, -1.5f, 1.5f);
  const size_t plane = size_t(o.size * o.size);
  for (size_t i = 0; i < x.data.size(); ++i) x.data[i] += offsets[i / plane];
  return x;
}

struct Outcome {
  double diff = 0, scale = 1e-3;  // max |vulkan - reference|, max |reference|
  nlohmann::json report;
  frugal::RefTensor mask;  // the reference's switches [N, K, 1, 1]
  frugal::RefValues all;   // every value of the reference run
};

// Planes of [N, C, H, W] with a nonzero value.
int64_t nonzero_planes(const frugal::RefTensor& t) {
  const size_t plane = size_t(t.dims[2] * t.dims[3]);
  int64_t n = 0;
  for (size_t p = 0; p < t.data.size() / plane; ++p) {
    bool any = false;
    for (size_t i = 0; i < plane; ++i) any = any || t.data[p * plane + i] != 0.0;
    n += any;
  }
  return n;
}

Outcome run_both(const frugal::Graph& g, const frugal::RefTensor& x, const std::string& options = "",
                 const nlohmann::json& plan = nullptr) {
  std::map<std::string, frugal::RefTensor> in;
  in["x"] = x;
  const frugal::RefValues all = frugal::reference_run_all(g, in);
  const frugal::RefTensor& want = all.at("y");
  Outcome r;
  if (all.count("g_mask")) r.mask = all.at("g_mask");
  r.all = all;
  vk_test::Executor ex(g, options);
  INFO(ex.created.message);
  REQUIRE(ex.ok());
  std::vector<vk_test::HostTensor> out;
  const vk_test::Status st = ex.run(vk_test::host_inputs(in), out, plan, &r.report);
  INFO(st.message);
  REQUIRE(st.ok());
  REQUIRE(out.size() == 1);
  for (double v : want.data) r.scale = std::max(r.scale, std::abs(v));
  r.diff = vk_test::max_diff(out[0].data, want);
  CHECK(ex.validation_errors() == 0);
  return r;
}

double mask_mean(const frugal::RefTensor& m) {
  double on = 0;
  for (double v : m.data) on += v;
  return on / double(m.data.size());
}

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

}  // namespace

// With texel operands (conv_texel.comp: the gated conv's kernel rows with
// taps, the consumer's k-major kernels over its listed channels) and the gate
// passes flat (an invocation per plane or kernel), and with conv.comp and the
// gate passes in work groups.
TEST_CASE("vulkan gated: equals the float64 reference at every threshold, both forms", "[vulkan][gating]") {
  VK_REQUIRE_DEVICE();
  for (bool pool_first : {false, true}) {
    for (bool strict : {false, true}) {
      for (float t : {0.0f, 0.3f, 0.5f, 0.7f, 1.0f}) {
        for (const char* options : {"{\"conv_texel\": \"on\", \"gate_passes\": \"flat\"}",
                                    "{\"conv_texel\": \"off\", \"gate_passes\": \"groups\"}"}) {
          GatedGraphOptions o;
          o.pool_first = pool_first;
          o.strict = strict;
          o.threshold = t;
          INFO("pool_first " << pool_first << " strict " << strict << " threshold " << t << " options "
                             << options);
          const int64_t n = 6;
          const Outcome r = run_both(gated_graph(o), gate_input(o, n, 5), options);
          CHECK(r.diff <= 1e-4 * r.scale);
          const nlohmann::json& conv = gate_entry(r.report, "conv1");
          CHECK(conv.at("gated") == true);
          CHECK(conv.at("samples") == n);
          CHECK(conv.at("kernels") == n * o.kernels);
          CHECK(conv.at("activity").get<double>() == Approx(mask_mean(r.mask)));
          if (t == 0.0f && !strict) CHECK(conv.at("activity") == 1.0);
          if (t == 1.0f) CHECK(conv.at("activity") == 0.0);
          // The gate's 1x1 (8 x 6 per sample), then 6 channels x 3x3 x 7x7 pixels per kernel on.
          const int64_t on = conv.at("kernels_on");
          CHECK(on == std::llround(mask_mean(r.mask) * double(n * o.kernels)));
          CHECK(conv.at("effective_macs") == n * 8 * 6 + on * 6 * 9 * 49);
          // The consumer conv2 (5 kernels, 3x3 over 3x3 pixels) runs the input channels that are not all
          // zero.
          const nlohmann::json& conv2 = gate_entry(r.report, "conv2");
          CHECK(conv2.at("skips_off_channels") == true);
          CHECK(conv2.at("effective_macs") == nonzero_planes(r.all.at("pool")) * 5 * 9 * 9);
          if (t == 1.0f) CHECK(conv2.at("effective_macs") == 0);
        }
      }
    }
  }
}

// A gated 1x1 conv on texel operands: input by quads of pixels (8 x 8 planes,
// C a multiple of 4) and by pixel (7 x 7), with 8 and with 4 kernels per invocation.
TEST_CASE("vulkan gated: gated 1x1 convs on texel operands", "[vulkan][gating]") {
  VK_REQUIRE_DEVICE();
  for (int64_t size : {8, 7}) {
    for (int64_t kernels : {12, 6}) {
      GatedGraphOptions o;
      o.kernel = 1;
      o.channels = 8;
      o.size = size;
      o.kernels = o.gate_channels = kernels;
      INFO("size " << size << " kernels " << kernels);
      const Outcome r = run_both(gated_graph(o), gate_input(o, 5, 23), "{\"conv_texel\": \"on\"}");
      CHECK(r.diff <= 1e-4 * r.scale);
      CHECK(masks_differ(r.mask));
      CHECK(gate_entry(r.report, "conv1").at("activity").get<double>() == Approx(mask_mean(r.mask)));
    }
  }
}

// Winograd forced (texel operands on): the gated conv's products over its
// active kernels' rows of U, its switched-off kernels written as 0 by the
// output transform; the consumer's products over its listed channels.
TEST_CASE("vulkan gated: gated convs and consumers as Winograd convs on texel operands", "[vulkan][gating]") {
  VK_REQUIRE_DEVICE();
  GatedGraphOptions o;
  o.channels = 8;
  o.size = 8;
  for (const char* wino : {"f23", "f43"}) {
    for (float t : {0.0f, 0.5f, 1.0f}) {
      o.threshold = t;
      INFO("winograd " << wino << " threshold " << t);
      const std::string options = std::string("{\"conv_texel\": \"on\", \"winograd\": \"") + wino + "\"}";
      const int64_t n = 5, P = wino == std::string("f23") ? 16 : 36, TS = wino == std::string("f23") ? 16 : 4;
      vk_test::Executor ex(gated_graph(o), options);
      REQUIRE(ex.ok());
      CHECK(ex.layer_bytes(0, int(n)).ws_bytes >= uint64_t(P * (o.channels + o.kernels) * TS * 4));
      const Outcome r = run_both(gated_graph(o), gate_input(o, n, 29), options);
      CHECK(r.diff <= 1e-4 * r.scale);
      if (t == 0.5f) CHECK(masks_differ(r.mask));
      CHECK(gate_entry(r.report, "conv1").at("activity").get<double>() == Approx(mask_mean(r.mask)));
      // The consumer: 5 kernels, 3x3 over 4x4 pixels, for the input channels that are not all zero.
      CHECK(gate_entry(r.report, "conv2").at("effective_macs") ==
            nonzero_planes(r.all.at("pool")) * 5 * 9 * 16);
    }
  }
}

TEST_CASE("vulkan gated: option gate_passes", "[vulkan][gating]") {
  VK_REQUIRE_DEVICE();
  vk_test::Executor ex(gated_graph(), "{\"gate_passes\": \"flat\"}");
  REQUIRE(ex.ok());
  CHECK(ex.describe()["vulkan"]["gate_passes"] == "flat");
  vk_test::Executor bad(gated_graph(), "{\"gate_passes\": 1}");
  CHECK(!bad.ok());
  CHECK_THAT(bad.created.message,
             Contains("'gate_passes' must be \"auto\" (the default), \"flat\" or \"groups\""));
}

TEST_CASE("vulkan gated: per-sample masks differ inside a batch", "[vulkan][gating]") {
  VK_REQUIRE_DEVICE();
  GatedGraphOptions o;
  o.kernels = o.gate_channels = 16;
  o.size = 9;
  for (const char* options : {"", "{\"conv\": \"dense\"}"}) {  // a gated conv ignores "dense"
    INFO("options " << options);
    const Outcome r = run_both(gated_graph(o), gate_input(o, 8, 11), options);
    CHECK(masks_differ(r.mask));
    const double activity = mask_mean(r.mask);
    CHECK((activity > 0.2 && activity < 0.8));
    CHECK(gate_entry(r.report, "conv1").at("activity").get<double>() == Approx(activity));
    CHECK(r.diff <= 1e-4 * r.scale);
  }
}

// A gated conv on a 4 x 4 output with 130 kernels over 40 channels: tiles of
// 16 kernels x 4 pixels per invocation (128 kernels a tile, so the active lists
// pad to 256) and a reduction of 360, long enough for the long step.
TEST_CASE("vulkan gated: 16 kernels per invocation and long steps", "[vulkan][gating]") {
  VK_REQUIRE_DEVICE();
  GatedGraphOptions o;
  o.channels = 40;
  o.kernels = o.gate_channels = 130;
  o.size = 4;
  for (const char* options : {"", "{\"conv_step\": 8}"}) {
    INFO("options " << options);
    const Outcome r = run_both(gated_graph(o), gate_input(o, 5, 13), options);
    const double activity = mask_mean(r.mask);
    CHECK((activity > 0.1 && activity < 0.9));
    CHECK(r.diff <= 1e-4 * r.scale);
  }
}

TEST_CASE("vulkan gated: a Gemm right after the gate", "[vulkan][gating]") {
  VK_REQUIRE_DEVICE();
  for (float t : {0.0f, 0.5f, 1.0f}) {
    GatedGraphOptions o;
    o.second_conv = false;  // Mul -> MaxPool -> Flatten -> Gemm
    o.threshold = t;
    INFO("threshold " << t);
    const Outcome r = run_both(gated_graph(o), gate_input(o, 5, 3));
    CHECK(r.diff <= 1e-4 * r.scale);
    CHECK(gate_entry(r.report, "conv1").at("activity").get<double>() == Approx(mask_mean(r.mask)));
    // The Gemm reads the 9 columns of each channel that is not all zero, times 4 outputs.
    const nlohmann::json& gemm = gate_entry(r.report, "y");
    CHECK(gemm.at("skips_off_channels") == true);
    const int64_t nonzero = gate_test::nonzero_blocks(r.all.at("flat").data, 9);
    CHECK(gemm.at("effective_macs") == nonzero * 9 * 4);
    if (t == 1.0f) CHECK(nonzero == 0);
  }
}

TEST_CASE("vulkan gated: the executor's gate_threshold replaces the model's", "[vulkan][gating]") {
  VK_REQUIRE_DEVICE();
  GatedGraphOptions o;
  const frugal::RefTensor x = gate_input(o, 4, 9);
  for (float t : {0.0f, 1.0f, 0.25f}) {
    GatedGraphOptions want = o;
    want.threshold = t;
    std::map<std::string, frugal::RefTensor> in;
    in["x"] = x;
    const frugal::RefTensor ref = frugal::reference_run(gated_graph(want), in).at("y");
    vk_test::Executor ex(gated_graph(o), "{\"gate_threshold\": " + std::to_string(t) + "}");
    REQUIRE(ex.ok());
    std::vector<vk_test::HostTensor> out;
    nlohmann::json report;
    REQUIRE(ex.run(vk_test::host_inputs(in), out, nullptr, &report).ok());
    double scale = 1e-3;
    for (double v : ref.data) scale = std::max(scale, std::abs(v));
    CHECK(vk_test::max_diff(out[0].data, ref) <= 1e-4 * scale);
    CHECK(gate_entry(report, "conv1").at("threshold").get<double>() == Approx(t));
    CHECK(ex.validation_errors() == 0);
  }
  vk_test::Executor bad(gated_graph(o), "{\"gate_threshold\": 1.5}");
  CHECK(!bad.ok());
  CHECK_THAT(bad.created.message, Contains("'gate_threshold' must be a number in [0, 1]"));
}

TEST_CASE("vulkan gated: plans that split the batch of a gated layer", "[vulkan][gating][plans]") {
  VK_REQUIRE_DEVICE();
  GatedGraphOptions o;
  o.kernels = o.gate_channels = 16;
  const int64_t n = 5;
  const frugal::Graph g = gated_graph(o);
  const frugal::RefTensor x = gate_input(o, n, 21);
  vk_test::Executor ex(g);
  REQUIRE(ex.ok());
  vk_test::MemoryModel mm(ex);
  std::mt19937_64 rng(3);
  for (int p = 0; p < 4; ++p) {
    std::vector<vk_test::Step> steps;
    if (p == 0) {  // every layer one sample at a time
      for (int64_t s = 0; s < n; ++s)
        for (size_t l = 0; l < mm.description()["layers"].size(); ++l) steps.push_back({int(l), s, 1});
    } else {
      steps = mm.random_plan(n, rng);
    }
    const nlohmann::json plan = vk_test::MemoryModel::to_json(steps, mm.description());
    INFO("plan " << plan.dump());
    const Outcome r = run_both(g, x, "", plan);
    CHECK(r.diff <= 1e-4 * r.scale);
    const nlohmann::json& conv = gate_entry(r.report, "conv1");
    CHECK(conv.at("samples") == n);
    CHECK(conv.at("activity").get<double>() == Approx(mask_mean(r.mask)));
  }
}

TEST_CASE("vulkan gated: the gated layer's workspace holds its gate", "[vulkan][gating]") {
  VK_REQUIRE_DEVICE();
  GatedGraphOptions o;  // C 6, K 8 (lists padded to 8)
  vk_test::Executor ex(gated_graph(o));
  REQUIRE(ex.ok());
  const int l = 0;
  const nlohmann::json d = ex.describe();
  CHECK(d["layers"][l]["name"] == "conv1");
  CHECK(d["layers"][l]["gate"]["kernels"] == 8);
  // Pooled input, switches, list and dispatch arguments per sample, in whole 64-byte lines.
  for (int n : {1, 3})
    CHECK(ex.layer_bytes(l, n).ws_bytes == (uint64_t(n) * (6 + 8 + 8 + 3) * 4 + 63) / 64 * 64);
}

// Split-K on gated convs and gate consumers (on GPUs, min_groups > 0; forced
// here): the gated conv's slices run over its active list with z = slices in
// the device-written arguments, the split sum writes 0 for switched-off
// kernels (whose slices wrote nothing, and whose output is not zero-filled
// first), the consumer's slices run over its listed channels. conv1: 32
// channels x 3x3 = 288 (4 slices of 72), conv2 (the consumer): 16 x 3x3 = 144 (2).
// Equal to the float64 reference and to the unsplit run's effective MACs.
TEST_CASE("vulkan gated: gated convs and consumers split their reduction", "[vulkan][gating]") {
  VK_REQUIRE_DEVICE();
  GatedGraphOptions o;
  o.channels = 32;
  o.kernels = o.gate_channels = 16;
  o.size = 6;
  for (float t : {0.0f, 0.5f, 1.0f}) {
    for (bool pool_first : {false, true}) {
      o.threshold = t;
      o.pool_first = pool_first;
      INFO("threshold " << t << " pool_first " << pool_first);
      const frugal::Graph g = gated_graph(o);
      const std::string split = "{\"min_groups\": 100000, \"conv_texel\": \"off\"}";  // conv.comp splits
      vk_test::Executor ex(g, split);
      REQUIRE(ex.ok());
      const nlohmann::json d = ex.describe();
      REQUIRE(d["layers"][0]["name"] == "conv1");
      const int64_t n = 5;
      // Partial sums in the workspace: conv1's 4 slices of 16 kernels x 6 x 6 per
      // sample, the consumer's 2 slices of 5 kernels x 3 x 3.
      CHECK(ex.layer_bytes(0, int(n)).ws_bytes >= uint64_t(n * 4 * 16 * 36 * 4));
      int conv2 = -1;
      for (size_t l = 0; l < d["layers"].size(); ++l)
        if (d["layers"][l]["name"] == "conv2") conv2 = int(l);
      REQUIRE(conv2 > 0);
      CHECK(ex.layer_bytes(conv2, int(n)).ws_bytes >= uint64_t(n * 2 * 5 * 9 * 4));
      const Outcome r = run_both(g, gate_input(o, n, 17), split);
      const Outcome plain = run_both(g, gate_input(o, n, 17), "{\"min_groups\": 0}");
      CHECK(r.diff <= 1e-4 * r.scale);
      if (t == 0.5f) CHECK(masks_differ(r.mask));
      for (const char* layer : {"conv1", "conv2"}) {
        const nlohmann::json& a = gate_entry(r.report, layer);
        const nlohmann::json& b = gate_entry(plain.report, layer);
        CHECK(a.at("effective_macs") == b.at("effective_macs"));
      }
    }
  }
}

// The run's arena is exactly the plan's peak, and the allocator puts a chunk
// landing at the top of the block at a 64-byte boundary. Here the peak is the
// gated conv's step (input, output and workspace; input and output in whole
// lines), which the workspace completes: a workspace a few bytes short of a
// line (16 + 16 + 16 + 3 words per sample) did not fit the hole left below the
// output, and every run compacted, sliding the output down by less than a
// line per sample in as many copies and barriers as that took (gated
// alexnet on an NVIDIA H200: 1513 copies, 7 ms a run at batches 1-4,
// docs/GATING.md). Now nothing moves.
TEST_CASE("vulkan gated: a run at the plan's peak moves nothing for the gate's workspace",
          "[vulkan][gating]") {
  VK_REQUIRE_DEVICE();
  GatedGraphOptions o;
  o.channels = o.kernels = o.gate_channels = 16;
  o.size = 8;  // 16 x 8 x 8 floats: input and output 4096 bytes a sample
  const frugal::Graph g = gated_graph(o);
  for (int64_t n : {1, 2, 3, 4, 8}) {
    INFO("batch " << n);
    const Outcome r = run_both(g, gate_input(o, n, 11));
    CHECK(r.diff <= 1e-4 * r.scale);
    CHECK(r.report.at("moved_bytes") == 0);
    CHECK(r.report.at("compactions") == 0);
    for (const nlohmann::json& st : r.report.at("steps")) CHECK(st.at("moved_bytes") == 0);
  }
}

TEST_CASE("vulkan gated: time_layer at a stated activity", "[vulkan][gating]") {
  VK_REQUIRE_DEVICE();
  GatedGraphOptions o;
  for (const char* option : {"0", "0.5", "1", "{\"conv1\": 0.25, \"conv2\": 0.75}"}) {
    INFO("gate_activity " << option);
    vk_test::Executor ex(gated_graph(o), std::string("{\"gate_activity\": ") + option + "}");
    REQUIRE(ex.ok());
    CHECK(ex.describe()["gate_activity"] == nlohmann::json::parse(option));
    double median = 0, spread = 0;
    for (int l = 0; l < int(ex.describe()["layers"].size()); ++l)
      CHECK(ex.time_layer(l, 3, 1, median, spread).ok());
    // Runs are not changed by it.
    const Outcome r =
        run_both(gated_graph(o), gate_input(o, 3, 4), std::string("{\"gate_activity\": ") + option + "}");
    CHECK(r.diff <= 1e-4 * r.scale);
    CHECK(ex.validation_errors() == 0);
  }
  vk_test::Executor bad(gated_graph(o), "{\"gate_activity\": {\"conv1\": 2}}");
  CHECK(!bad.ok());
  CHECK_THAT(bad.created.message, Contains("for layer 'conv1' must be a number in [0, 1]"));
}

// VBS plans (docs/PLANNER.md) split a layer's batch into steps; a gated conv,
// its consumer conv and its consumer Gemm then gate each step's samples on
// their own. On both executors, every plan gives the whole batch's outputs
// (bit for bit on the CPU, where the kernels take the same path per sample),
// equals the float64 reference, and peaks at the plan's peak as the memory
// model counts it, in an arena of exactly that size.
TEST_CASE("gated layers in plans that split their batch: whole batch, reference and peak, both executors",
          "[vulkan][gating][plans]") {
  VK_REQUIRE_DEVICE();
  GatedGraphOptions o;
  o.kernels = o.gate_channels = 16;
  const int64_t n = 5;
  const frugal::Graph g = gated_graph(o);
  const frugal::RefTensor x = gate_input(o, n, 33);
  std::map<std::string, frugal::RefTensor> in;
  in["x"] = x;
  const frugal::RefValues all = frugal::reference_run_all(g, in);
  const frugal::RefTensor& want = all.at("y");
  REQUIRE(masks_differ(all.at("g_mask")));
  const double on = mask_mean(all.at("g_mask"));
  REQUIRE(on > 0.0);
  REQUIRE(on < 1.0);
  double scale = 1e-3;
  for (double v : want.data) scale = std::max(scale, std::abs(v));
  const std::vector<vk_test::HostTensor> inputs = vk_test::host_inputs(in);

  exec_test::PluginExecutor cpu(exec_test::executor_api("cpu"), g, "{\"threads\": 1}");
  REQUIRE(cpu.ok());
  vk_test::Executor vk(g);
  INFO(vk.created.message);
  REQUIRE(vk.ok());
  exec_test::MemoryModel cpu_mm(cpu), vk_mm(vk);
  std::vector<vk_test::HostTensor> cpu_whole, vk_whole;
  REQUIRE(cpu.run(inputs, cpu_whole).ok());
  REQUIRE(vk.run(inputs, vk_whole).ok());
  CHECK(vk_test::max_diff(vk_whole[0].data, want) <= 1e-4 * scale);
  CHECK(vk_test::max_diff(cpu_whole[0].data, want) <= 1e-4 * scale);

  const size_t layers = vk_mm.description()["layers"].size();
  REQUIRE(layers == cpu_mm.description()["layers"].size());
  std::mt19937_64 rng(17);
  int split_gated = 0;  // plans whose gated conv ran in more than one step
  for (int p = 0; p < 6; ++p) {
    std::vector<exec_test::Step> steps;
    if (p == 0) {  // every layer one sample at a time
      for (int64_t s = 0; s < n; ++s)
        for (size_t l = 0; l < layers; ++l) steps.push_back({int(l), s, 1});
    } else {
      steps = vk_mm.random_plan(n, rng);
    }
    int gated_steps = 0;
    for (const exec_test::Step& s : steps) gated_steps += s.layer == 0;
    split_gated += gated_steps > 1;
    const nlohmann::json plan = exec_test::MemoryModel::to_json(steps, vk_mm.description());
    INFO("plan " << plan.dump());
    for (int e = 0; e < 2; ++e) {
      exec_test::PluginExecutor& ex = e == 0 ? static_cast<exec_test::PluginExecutor&>(cpu) : vk;
      const exec_test::MemoryModel& mm = e == 0 ? cpu_mm : vk_mm;
      INFO((e == 0 ? "cpu" : "vulkan"));
      const uint64_t peak = mm.peak(steps, n);
      REQUIRE(ex.set_budget(peak).ok());
      std::vector<vk_test::HostTensor> out;
      nlohmann::json report;
      const exec_test::Status st = ex.run(inputs, out, plan, &report);
      INFO(st.message);
      REQUIRE(st.ok());
      CHECK(report.at("peak_bytes").get<uint64_t>() == peak);
      CHECK(vk_test::max_diff(out[0].data, want) <= 1e-4 * scale);
      if (e == 0) {
        CHECK(out[0].data == cpu_whole[0].data);
      } else {
        REQUIRE(out[0].data.size() == vk_whole[0].data.size());
        double d = 0;
        for (size_t i = 0; i < out[0].data.size(); ++i)
          d = std::max(d, double(std::fabs(out[0].data[i] - vk_whole[0].data[i])));
        CHECK(d <= 1e-5 * scale);
        CHECK(vk.validation_errors() == 0);
      }
      const nlohmann::json& conv = gate_entry(report, "conv1");
      CHECK(conv.at("samples") == n);
      CHECK(conv.at("activity").get<double>() == Approx(on));
    }
  }
  CHECK(split_gated >= 4);  // the one-at-a-time plan and most random ones (5 of 6 with this seed)
}
