// The vulkan executor's layers (names, ops, inputs, shapes, MACs) and its
// in/out bytes against the cpu executor's on the same model (skipped when the
// cpu executor is not built). A separate executable, so that a failure inside
// the other plugin cannot hide this folder's other results.
#include <catch2/catch.hpp>

#include <filesystem>
#include <iostream>

#include "onnx/onnx_export.h"
#include "plugins/plugin_registry.h"
#include "vk_test_util.h"

using vk_test::GraphMaker;
namespace fs = std::filesystem;

namespace {

// x [N,3,12,12] -> conv(8)+BN+Relu -> maxpool 2 -> conv(4) -> flatten -> gemm(10): a chain.
frugal::Graph chain_model() {
  GraphMaker m;
  m.input("x", {-1, 3, 12, 12});
  frugal::Node& c1 = m.node("Conv", "conv1", {"x", m.weight("w1", {8, 3, 3, 3}, -0.3f, 0.3f), m.weight("b1", {8})}, {"c1"});
  c1.set_attr_ints("pads", {1, 1, 1, 1});
  m.node("BatchNormalization", "bn1",
         {"c1", m.weight("s", {8}, 0.5f, 1.5f), m.weight("t", {8}), m.weight("mu", {8}), m.weight("var", {8}, 0.5f, 2.0f)}, {"n1"});
  m.node("Relu", "relu1", {"n1"}, {"r1"});
  frugal::Node& p = m.node("MaxPool", "pool", {"r1"}, {"p"});
  p.set_attr_ints("kernel_shape", {2, 2});
  p.set_attr_ints("strides", {2, 2});
  m.node("Conv", "conv2", {"p", m.weight("w2", {4, 8, 3, 3}, -0.3f, 0.3f)}, {"c2"});
  m.node("Flatten", "flat", {"c2"}, {"f"});
  m.node("Gemm", "fc", {"f", m.weight("wf", {10, 64}, -0.2f, 0.2f), m.weight("bf", {10})}, {"y"}).set_attr_int("transB", 1);
  m.output("y");
  return m.g;
}

}  // namespace

TEST_CASE("layers and their bytes agree with the cpu executor's (when it is built)", "[vulkan][runtime]") {
  const std::string file = std::string(FRUGAL_TEST_BINARY_DIR) + "/plugins/cpu.so";
  if (!fs::exists(file)) {
    std::cout << "SKIPPED (the cpu executor is not built in this tree)\n";
    return;
  }
  static frugal::PluginRegistry registry;
  std::string why;
  const frugal::LoadedPlugin* cpu = registry.load_file(file, &why);
  INFO(why);
  REQUIRE(cpu != nullptr);
  const auto& api = *static_cast<const frugal_executor_api*>(cpu->api);
  const std::string onnx = frugal::save_onnx_bytes(chain_model());
  frugal_executor* handle = nullptr;
  frugal_error err{};
  REQUIRE(api.create(onnx.data(), onnx.size(), nullptr, &handle, &err) == FRUGAL_OK);
  frugal_blob blob{nullptr, 0, nullptr};
  REQUIRE(api.describe(handle, &blob, &err) == FRUGAL_OK);
  const nlohmann::json c = nlohmann::json::parse(std::string(static_cast<const char*>(blob.data), blob.size));
  if (blob.release) blob.release(blob.data);
  VK_REQUIRE_DEVICE();
  vk_test::Executor ex(chain_model());
  REQUIRE(ex.ok());
  const nlohmann::json v = ex.describe();
  REQUIRE(v["layers"].size() == c["layers"].size());
  for (size_t l = 0; l < v["layers"].size(); ++l) {
    INFO("layer " << l);
    for (const char* key : {"name", "ops", "inputs", "output_shape", "macs_per_sample"}) CHECK(v["layers"][l][key] == c["layers"][l][key]);
    for (int batch : {1, 6}) {
      frugal_layer_bytes cb{};
      REQUIRE(api.layer_bytes(handle, int32_t(l), batch, &cb, &err) == FRUGAL_OK);
      const frugal_layer_bytes vb = ex.layer_bytes(int(l), batch);
      CHECK(vb.in_bytes == cb.in_bytes);
      CHECK(vb.out_bytes == cb.out_bytes);
    }
  }
  api.destroy(handle);
}

