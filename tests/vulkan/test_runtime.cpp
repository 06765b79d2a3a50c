// The runtime of the vulkan executor: describe and layer_bytes (the cpu
// executor's definitions, recomputed here from the shapes), the budget (refused
// before running one byte below the peak; exactly the peak fits), repeated runs
// and batch changes, plans that split the batch, time_layer, the pipeline cache on disk, operands split
// to fit small bindings, clear errors for bad input, and gated convolution
// (white box, through the engine library) against the reference with the
// switched-off kernels zeroed.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "frugal/model/onnx_export.h"
#include "frugal/plugin_sdk.hpp"
#include "vk_executor.h"
#include "vk_test_util.h"

using vk_test::chain_model;
using vk_test::GraphMaker;
using vk_test::host_inputs;
using vk_test::HostTensor;
using vk_test::max_diff;

namespace fs = std::filesystem;

namespace {

int64_t product(const std::vector<int64_t>& d) {
  int64_t p = 1;
  for (int64_t v : d) p *= v;
  return p;
}

bool validation_on() {
  const char* v = std::getenv("FRUGAL_VULKAN_VALIDATION");
  return v && std::string(v) == "1";
}

}  // namespace

TEST_CASE("describe lists bundled layers, the device, and the validation layer's count",
          "[vulkan][runtime]") {
  VK_REQUIRE_DEVICE();
  vk_test::Executor ex(chain_model());
  REQUIRE(ex.ok());
  const nlohmann::json d = ex.describe();
  CHECK(d["device"].get<std::string>().rfind("vulkan: ", 0) == 0);
  CHECK(d["batched"] == true);
  REQUIRE(d["layers"].size() == 5);
  CHECK(d["layers"][0]["ops"] == nlohmann::json({"Conv", "BatchNormalization", "Relu"}));
  CHECK(d["layers"][0]["output_tensor"] == "r1");
  CHECK(d["layers"][1]["inputs"] == nlohmann::json({"conv1"}));
  CHECK(d["layers"][4]["ops"] == nlohmann::json({"Gemm"}));
  CHECK(d["layers"][0]["macs_per_sample"] == 8 * 12 * 12 * 3 * 3 * 3);
  CHECK(d["layers"][4]["macs_per_sample"] == 10 * 64);
  CHECK(d["vulkan"]["physical_device"]["name"].get<std::string>().size() > 0);
  CHECK(d["vulkan"]["conv"] == "indirect");
  if (validation_on()) CHECK(d["vulkan"]["validation"] == true);
  CHECK(d["vulkan"]["validation_errors"] == 0);
}

TEST_CASE("layer_bytes follows the cpu executor's definitions", "[vulkan][runtime]") {
  VK_REQUIRE_DEVICE();
  vk_test::Executor ex(chain_model());
  REQUIRE(ex.ok());
  const nlohmann::json d = ex.describe();
  std::map<std::string, std::vector<int64_t>> shape = {{"x", {1, 3, 12, 12}}};
  for (const auto& L : d["layers"])
    shape[L["output_tensor"].get<std::string>()] = L["output_shape"].get<std::vector<int64_t>>();
  for (int batch : {1, 3, 8}) {
    for (size_t l = 0; l < d["layers"].size(); ++l) {
      const auto& L = d["layers"][l];
      uint64_t in = 0;
      for (const auto& t : L["input_tensors"])
        in += uint64_t(product(shape[t.get<std::string>()]) / shape[t.get<std::string>()][0] * batch * 4);
      const std::vector<int64_t>& o = shape[L["output_tensor"].get<std::string>()];
      const frugal_layer_bytes b = ex.layer_bytes(int(l), batch);
      INFO("layer " << l << " batch " << batch);
      CHECK(b.in_bytes == in);
      CHECK(b.out_bytes == uint64_t(product(o) / o[0] * batch * 4));
      CHECK(b.ws_bytes == 0);  // direct kernels: no workspace
    }
  }
}

TEST_CASE("a budget one byte below the peak is refused before running; exactly the peak is enough",
          "[vulkan][runtime]") {
  VK_REQUIRE_DEVICE();
  const frugal::Graph g = chain_model();
  const auto in = vk_test::random_inputs(g, 4, 5);
  const frugal::RefValues want = frugal::reference_run(g, in);
  vk_test::Executor ex(g);
  REQUIRE(ex.ok());
  std::vector<HostTensor> out;
  nlohmann::json report;
  REQUIRE(ex.run(host_inputs(in), out, nullptr, &report).ok());
  CHECK(max_diff(out[0].data, want.at("y")) < 1e-4);
  CHECK(report["auto_budget"] == true);
  // The memory model on a chain: at layer l the live bytes are its input and output.
  uint64_t peak = 4 * 3 * 12 * 12 * 4;
  for (int l = 0; l < 5; ++l) {
    const frugal_layer_bytes b = ex.layer_bytes(l, 4);
    peak = std::max<uint64_t>(peak, b.in_bytes + b.out_bytes + b.ws_bytes);
  }
  CHECK(report["peak_bytes"].get<uint64_t>() == peak);
  CHECK(report["arena_bytes"].get<uint64_t>() == peak);  // no budget: an arena of exactly the plan's peak
  CHECK(report["extent_bytes"].get<uint64_t>() <= peak);
  REQUIRE(report["steps"].size() == 5);
  CHECK(report["steps"][0]["count"] == 4);

  REQUIRE(ex.set_budget(peak - 1).ok());
  out.clear();
  const vk_test::Status refused = ex.run(host_inputs(in), out);
  INFO(refused.message);
  CHECK(refused.code == FRUGAL_ERR_BUDGET);
  CHECK(refused.message.find("needs ") != std::string::npos);
  CHECK(refused.message.find("(" + std::to_string(peak) + " bytes)") != std::string::npos);
  CHECK(refused.message.find("budget is ") != std::string::npos);
  CHECK(refused.message.find("(" + std::to_string(peak - 1) + " bytes)") != std::string::npos);
  CHECK(std::isnan(out[0].data[0]));  // nothing ran, nothing was written

  REQUIRE(ex.set_budget(peak).ok());
  out.clear();
  REQUIRE(ex.run(host_inputs(in), out, nullptr, &report).ok());
  CHECK(report["auto_budget"] == false);
  CHECK(report["budget_bytes"] == peak);
  CHECK(report["arena_bytes"] == peak);
  CHECK(report["peak_bytes"] == peak);
  CHECK(max_diff(out[0].data, want.at("y")) < 1e-4);
  CHECK(ex.validation_errors() == 0);
}

TEST_CASE("repeated runs replay the recording; a new batch size records again", "[vulkan][runtime]") {
  VK_REQUIRE_DEVICE();
  const frugal::Graph g = chain_model();
  vk_test::Executor ex(g);
  REQUIRE(ex.ok());
  const bool with_budget = GENERATE(true, false);  // without one the arena is sized per run
  INFO((with_budget ? "budget of 1 MiB" : "no budget"));
  if (with_budget) REQUIRE(ex.set_budget(1 << 20).ok());
  int64_t last = 0;
  for (int64_t batch : {2, 2, 5, 1, 1, 5, 5}) {
    INFO("batch " << batch);
    const auto in = vk_test::random_inputs(g, batch, uint64_t(batch) * 31 + uint64_t(last));
    const frugal::RefValues want = frugal::reference_run(g, in);
    std::vector<HostTensor> out;
    nlohmann::json report;
    REQUIRE(ex.run(host_inputs(in), out, nullptr, &report).ok());
    CHECK(out[0].dims == std::vector<int64_t>{batch, 10});
    CHECK(max_diff(out[0].data, want.at("y")) < 1e-4);
    // Recorded once per batch size in a row, replayed after (new inputs, same commands).
    const double recorded = report["host_seconds"]["record"].get<double>();
    if (batch == last)
      CHECK(recorded == 0);
    else
      CHECK(recorded > 0);
    CHECK(report["auto_budget"] == !with_budget);
    CHECK(report["peak_bytes"] <= report["budget_bytes"]);
    last = batch;
  }
  CHECK(ex.validation_errors() == 0);
}

TEST_CASE("a plan that splits the batch runs and matches the reference", "[vulkan][runtime]") {
  VK_REQUIRE_DEVICE();
  const frugal::Graph g = chain_model();
  vk_test::Executor ex(g);
  REQUIRE(ex.ok());
  const auto in = vk_test::random_inputs(g, 3, 9);
  const frugal::RefValues want = frugal::reference_run(g, in);
  const nlohmann::json d = ex.describe();
  nlohmann::json whole = {{"steps", nlohmann::json::array()}};
  for (const auto& L : d["layers"])
    whole["steps"].push_back({{"layer", L["name"]}, {"first", 0}, {"count", 3}});
  std::vector<HostTensor> out;
  CHECK(ex.run(host_inputs(in), out, whole).ok());
  CHECK(max_diff(out[0].data, want.at("y")) < 1e-4);
  // Sample 0 alone through every layer, then samples 1..2 together.
  nlohmann::json split = {{"steps", nlohmann::json::array()}};
  for (const auto& L : d["layers"])
    split["steps"].push_back({{"layer", L["name"]}, {"first", 0}, {"count", 1}});
  for (const auto& L : d["layers"])
    split["steps"].push_back({{"layer", L["name"]}, {"first", 1}, {"count", 2}});
  out.clear();
  nlohmann::json report;
  const vk_test::Status st = ex.run(host_inputs(in), out, split, &report);
  INFO(st.message);
  REQUIRE(st.ok());
  CHECK(max_diff(out[0].data, want.at("y")) < 1e-4);
  CHECK(report["steps"].size() == 10);
  // A plan that runs a layer before its input holds the samples is refused, naming the step.
  nlohmann::json bad = split;
  std::swap(bad["steps"][0], bad["steps"][1]);
  out.clear();
  const vk_test::Status refused = ex.run(host_inputs(in), out, bad);
  CHECK(refused.code == FRUGAL_ERR_INVALID_ARGUMENT);
  CHECK(refused.message.find("step 0") != std::string::npos);
  CHECK(ex.validation_errors() == 0);
}

TEST_CASE("time_layer measures every layer with timestamps and respects the budget", "[vulkan][runtime]") {
  VK_REQUIRE_DEVICE();
  vk_test::Executor ex(chain_model());
  REQUIRE(ex.ok());
  for (int l = 0; l < 5; ++l) {
    double median = -1, spread = -1;
    const vk_test::Status st = ex.time_layer(l, 4, 3, median, spread);
    INFO("layer " << l << ": " << st.message);
    REQUIRE(st.ok());
    CHECK(median > 0);
    CHECK(spread >= 0);
  }
  REQUIRE(ex.set_budget(1000).ok());
  double median = 0, spread = 0;
  const vk_test::Status st = ex.time_layer(0, 4, 3, median, spread);
  CHECK(st.code == FRUGAL_ERR_BUDGET);
  CHECK(ex.validation_errors() == 0);
}

TEST_CASE("the pipeline cache is written to disk and read back by the next device", "[vulkan][runtime]") {
  VK_REQUIRE_DEVICE();
  const fs::path file = fs::path(FRUGAL_TEST_BINARY_DIR) / "test-cache" / "runtime-test-pipelines.bin";
  fs::remove(file);
  const std::string options = "{\"pipeline_cache\": \"" + file.string() + "\"}";
  {
    vk_test::Executor first(chain_model(), options);
    REQUIRE(first.ok());
    CHECK(first.describe()["vulkan"]["pipeline_cache_loaded"] == false);
  }
  REQUIRE(fs::exists(file));
  // The header names this device (Vulkan spec: length, version, vendor, device, UUID).
  std::ifstream f(file, std::ios::binary);
  uint32_t header[4] = {};
  f.read(reinterpret_cast<char*>(header), sizeof header);
  CHECK(header[0] >= 32);
  CHECK(header[1] == 1);
  vk_test::Executor second(chain_model(), options);  // the first's device is gone: a new one reads the file
  REQUIRE(second.ok());
  const nlohmann::json v = second.describe()["vulkan"];
  CHECK(v["pipeline_cache_loaded"] == true);
  CHECK(header[2] == v["physical_device"]["vendor_id"].get<uint32_t>());
  CHECK(header[3] == v["physical_device"]["device_id"].get<uint32_t>());
}

TEST_CASE("operands larger than one binding are split by samples and by columns", "[vulkan][runtime]") {
  VK_REQUIRE_DEVICE();
  // 4096-byte windows: conv1's output is 4608 bytes per sample (too big), so a
  // model whose samples fit: x [N,2,8,8] -> conv(4) -> gemm with a 16 KB weight.
  GraphMaker m;
  m.input("x", {-1, 2, 8, 8});
  m.node("Conv", "conv", {"x", m.weight("w", {4, 2, 3, 3}), m.weight("b", {4})}, {"c"})
      .set_attr_ints("pads", {1, 1, 1, 1});
  m.node("Relu", "relu", {"c"}, {"r"});
  m.node("Flatten", "flat", {"r"}, {"f"});
  m.node("Gemm", "fc", {"f", m.weight("wf", {256, 16}, -0.1f, 0.1f), m.weight("bf", {16})}, {"g"});
  m.node("Softmax", "sm", {"g"}, {"y"}).set_attr_int("axis", 1);
  m.output("y");
  const auto r = vk_test::check_against_reference(m.g, vk_test::random_inputs(m.g, 6, 12),
                                                  "{\"max_binding_bytes\": 4096}");
  CHECK(r.ran);
  // One sample that cannot fit a window is refused with a message.
  vk_test::Executor ex(chain_model(), "{\"max_binding_bytes\": 4096}");
  REQUIRE(ex.ok());
  std::vector<HostTensor> out;
  const vk_test::Status st = ex.run(host_inputs(vk_test::random_inputs(chain_model(), 1, 3)), out);
  INFO(st.message);
  CHECK(st.code == FRUGAL_ERR_UNSUPPORTED);
  CHECK(st.message.find("conv1") != std::string::npos);
  CHECK(st.message.find("binding") != std::string::npos);
}

TEST_CASE("bad input gives clear errors that name what is wrong", "[vulkan][runtime]") {
  VK_REQUIRE_DEVICE();
  {
    GraphMaker m;
    m.input("x", {-1, 4});
    m.node("Tanh", "t", {"x"}, {"a"});
    m.node("Relu", "r", {"a"}, {"b"});
    m.node("Erf", "e", {"b"}, {"y"});
    m.output("y");
    vk_test::Executor ex(m.g);
    CHECK(ex.created.code == FRUGAL_ERR_UNSUPPORTED);
    CHECK(ex.created.message.find("Tanh (node 't')") != std::string::npos);
    CHECK(ex.created.message.find("Erf (node 'e')") != std::string::npos);
  }
  {
    vk_test::Executor ex(chain_model(), "{\"device\": 99}");
    CHECK(ex.created.code == FRUGAL_ERR_INVALID_ARGUMENT);
    CHECK(ex.created.message.find("no such Vulkan device") != std::string::npos);
  }
  {
    vk_test::Executor ex(chain_model(), "{\"conv\": \"fast\"}");
    CHECK(ex.created.code == FRUGAL_ERR_INVALID_ARGUMENT);
    CHECK(ex.created.message.find("'conv'") != std::string::npos);
  }
  {
    vk_test::Executor ex(chain_model(), "{\"shader_dir\": \"/nonexistent/shaders\"}");
    CHECK(ex.created.code == FRUGAL_ERR_DEVICE);
    CHECK(ex.created.message.find("/nonexistent/shaders/") != std::string::npos);
  }
  {
    vk_test::Executor ex(std::string("not an onnx model"));
    CHECK(ex.created.code == FRUGAL_ERR_INVALID_ARGUMENT);
  }
  {
    vk_test::Executor ex(chain_model());
    REQUIRE(ex.ok());
    std::vector<HostTensor> in = {{"x", {2, 3, 12, 11}, std::vector<float>(2 * 3 * 12 * 11, 0.0f)}};
    std::vector<HostTensor> out = {{"y", {2, 10}, {}}};
    const vk_test::Status st = ex.run(in, out);
    CHECK(st.code == FRUGAL_ERR_INVALID_ARGUMENT);
    CHECK(st.message.find("input 'x' has shape [2, 3, 12, 11]") != std::string::npos);
  }
}

// ---- gated convolution (white box) -------------------------------------------------------

namespace {

struct EngineRun {
  std::vector<float> out;
  std::vector<int64_t> dims;
};

EngineRun engine_run(frugal::vk::Executor& ex, const frugal::RefTensor& x, const char* plan = nullptr) {
  EngineRun r;
  const std::vector<float> in(x.data.begin(), x.data.end());
  r.dims = ex.model().dims_at(ex.model().outputs()[0], x.dims[0]);
  r.out.assign(size_t(product(r.dims)), std::nanf(""));
  frugal_tensor ti{"x",           FRUGAL_DTYPE_FLOAT32,          int32_t(x.dims.size()),
                   x.dims.data(), const_cast<float*>(in.data()), in.size() * 4};
  frugal_tensor to{nullptr,       FRUGAL_DTYPE_FLOAT32, int32_t(r.dims.size()),
                   r.dims.data(), r.out.data(),         r.out.size() * 4};
  ex.run(plan, &ti, 1, &to, 1);
  return r;
}

}  // namespace

// set_gates on a conv: a 3x3 one on conv.comp, and a 1x1 one that reads texels
// when ungated (option conv_texel), which runs gated on conv.comp instead.
static void check_set_gates(GraphMaker& m, int64_t N, int64_t M, const char* options) {
  const auto in = vk_test::random_inputs(m.g, N, 44);
  const frugal::RefTensor want = frugal::reference_run(m.g, in).at("y");
  const std::string onnx = frugal::save_onnx_bytes(m.g);
  frugal::vk::Executor ex(onnx.data(), onnx.size(), frugal::vk::ExecutorOptions::parse(options));
  const std::vector<float> gates = vk_test::random_floats(size_t(N * M), 99, 0.0f, 1.0f);
  const int64_t plane = want.data.size() / size_t(N * M);

  ex.set_gates(0, N, gates, 0.5f);
  EngineRun r = engine_run(ex, in.at("x"));
  int active = 0;
  for (int64_t s = 0; s < N; ++s)
    for (int64_t k = 0; k < M; ++k) {
      const bool on = gates[size_t(s * M + k)] > 0.5f;
      active += on;
      for (int64_t p = 0; p < plane; ++p) {
        const size_t i = size_t((s * M + k) * plane + p);
        if (on)
          CHECK(std::fabs(r.out[i] - want.data[i]) <= 1e-4 + 1e-3 * std::fabs(want.data[i]));
        else
          CHECK(r.out[i] == 0.0f);
      }
    }
  CHECK(active > 0);
  CHECK(active < N * M);  // the draw switched some kernels off and some on

  // A plan that splits the gated layer's batch (sample 0, then samples 1..2)
  // reads each step's own gates: the same bits as the whole batch.
  const std::string layer = ex.model().layers()[0].name;
  REQUIRE(ex.model().layers().size() == 1);
  const std::string split = "{\"steps\": [{\"layer\": \"" + layer + "\", \"first\": 0, \"count\": 1}, " +
                            "{\"layer\": \"" + layer + "\", \"first\": 1, \"count\": 2}]}";
  const EngineRun parts = engine_run(ex, in.at("x"), split.c_str());
  REQUIRE(parts.out.size() == r.out.size());
  for (size_t i = 0; i < r.out.size(); ++i) CHECK(parts.out[i] == r.out[i]);

  ex.set_gates(0, N, gates, -1.0f);  // every kernel on: the dense result
  r = engine_run(ex, in.at("x"));
  CHECK(max_diff(r.out, want) < 1e-4);

  ex.set_gates(0, N, gates, 2.0f);  // every kernel off
  r = engine_run(ex, in.at("x"));
  for (float v : r.out) CHECK(v == 0.0f);

  ex.clear_gates(0);
  r = engine_run(ex, in.at("x"));
  CHECK(max_diff(r.out, want) < 1e-4);
  CHECK(ex.validation_errors() == 0);
}

TEST_CASE("gated conv computes only the active kernels, per sample, and zeroes the others",
          "[vulkan][gating]") {
  VK_REQUIRE_DEVICE();
  const int64_t M = 12;
  for (int k : {3, 1}) {
    INFO("kernel " << k);
    GraphMaker m;
    m.input("x", {-1, k == 3 ? 5 : 8, 9, 8});
    frugal::Node& c =
        m.node("Conv", "conv", {"x", m.weight("w", {M, k == 3 ? 5 : 8, k, k}), m.weight("b", {M})}, {"c"});
    if (k == 3) {
      c.set_attr_ints("pads", {1, 0, 1, 2});
      c.set_attr_ints("strides", {2, 1});
    }
    m.node("Relu", "relu", {"c"}, {"y"});
    m.output("y");
    check_set_gates(m, 3, M, k == 1 ? "{\"conv_texel\": \"on\"}" : "{\"conv_texel\": \"off\"}");
  }
  {  // a depthwise conv on texels (dwconv_texel.spv) runs gated on dwconv.comp
    INFO("depthwise");
    GraphMaker m;
    m.input("x", {-1, M, 9, 8});
    frugal::Node& c = m.node("Conv", "conv", {"x", m.weight("w", {M, 1, 3, 3}), m.weight("b", {M})}, {"c"});
    c.set_attr_ints("pads", {1, 1, 1, 1});
    c.set_attr_int("group", M);
    m.node("Relu", "relu", {"c"}, {"y"});
    m.output("y");
    check_set_gates(m, 3, M, "{\"conv_texel\": \"on\"}");
  }
  // A 3x3 conv on texels keeps its kernels k-major only: set_gates says how to gate it.
  GraphMaker m;
  m.input("x", {-1, 5, 9, 7});
  m.conv("x", "y", 5, M, 3, 1, 1, {1, 1, 1, 1});
  m.output("y");
  const std::string onnx = frugal::save_onnx_bytes(m.g);
  frugal::vk::Executor ex(
      onnx.data(), onnx.size(),
      frugal::vk::ExecutorOptions::parse("{\"conv_texel\": \"on\", \"winograd\": \"off\"}"));
  const std::vector<float> gates(size_t(2 * M), 1.0f);
  CHECK_THROWS_WITH(ex.set_gates(0, 2, gates, 0.5f),
                    Catch::Matchers::Contains("{\"conv_texel\": \"off\"} to set its gates"));
}

TEST_CASE("a validation error makes the next run fail with FRUGAL_ERR_DEVICE", "[vulkan][validation]") {
  VK_REQUIRE_DEVICE();
  INFO("needs the validation layer on: FRUGAL_VULKAN_VALIDATION=1, as ctest sets it");
  REQUIRE(validation_on());
  GraphMaker m;
  m.input("x", {-1, 4});
  m.node("Relu", "relu", {"x"}, {"y"});
  m.output("y");
  const std::string onnx = frugal::save_onnx_bytes(m.g);
  frugal::vk::Executor ex(onnx.data(), onnx.size(), frugal::vk::ExecutorOptions::parse(nullptr));
  frugal::RefTensor x = frugal::random_ref_tensor({2, 4}, 1);
  CHECK(engine_run(ex, x).out.size() == 8);
  CHECK(ex.validation_errors() == 0);
  // A zero-sized copy is invalid usage (VUID-VkBufferCopy-size-01988) that drivers ignore.
  frugal::vk::Device& d = ex.device();
  frugal::vk::Buffer a(d, 64, VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT, false,
                       "a");
  d.run_commands([&](VkCommandBuffer cb) {
    VkBufferCopy c{0, 32, 0};
    d.fn().vkCmdCopyBuffer(cb, a.handle(), a.handle(), 1, &c);
  });
  CHECK(ex.validation_errors() >= 1);
  try {
    engine_run(ex, x);
    FAIL("the run after a validation error succeeded");
  } catch (const frugal::sdk::Failure& f) {
    CHECK(f.status == FRUGAL_ERR_DEVICE);
    CHECK(std::string(f.what()).find("validation layer reported") != std::string::npos);
  }
}
