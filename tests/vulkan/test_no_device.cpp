// A machine without Vulkan: ctest runs this executable twice, once with the
// loader pointed at a driver file that does not exist (VK_ICD_FILENAMES) and
// once with FRUGAL_VULKAN_LOADER naming a loader that does not exist. The
// plugin must still load, create() must fail with FRUGAL_ERR_DEVICE and a
// message that says what is missing, `frugal devices` data must carry the
// error, and the cpu executor (when built) must keep working.

#include <catch2/catch.hpp>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "frugal/model/graph.h"
#include "frugal/model/onnx_export.h"
#include "frugal/plugin.h"
#include "loader/plugin_registry.h"

namespace {

// y = Relu(x), x: [N, 3]
std::string relu_model() {
  frugal::Graph g;
  frugal::TensorDesc x;
  x.name = "x";
  x.has_shape = true;
  x.shape = {frugal::Dim{-1, "N"}, frugal::Dim{3, ""}};
  g.tensors["x"] = x;
  g.inputs = {"x"};
  frugal::Node n;
  n.name = "relu";
  n.op_type = "Relu";
  n.inputs = {"x"};
  n.outputs = {"y"};
  g.nodes.push_back(n);
  g.tensors["y"].name = "y";
  g.outputs = {"y"};
  return frugal::save_onnx_bytes(g);
}

frugal::PluginRegistry& registry() {
  static frugal::PluginRegistry r;
  return r;
}

const frugal::LoadedPlugin& load(const std::string& name) {
  std::string why;
  const frugal::LoadedPlugin* p =
      registry().load_file(std::string(FRUGAL_TEST_BINARY_DIR) + "/plugins/" + name + ".so", &why);
  INFO(why);
  REQUIRE(p != nullptr);
  return *p;
}

// create() of the vulkan plugin: its status and message.
std::pair<frugal_status, std::string> create_vulkan() {
  const auto& api = *static_cast<const frugal_executor_api*>(load("vulkan").api);
  const std::string model = relu_model();
  frugal_executor* ex = nullptr;
  frugal_error err{};
  const frugal_status st = api.create(model.data(), model.size(), nullptr, &ex, &err);
  if (ex) api.destroy(ex);
  return {st, err.message};
}

nlohmann::json devices_json() {
  auto ext = static_cast<const frugal_devices_extension*>(
      load("vulkan").extension(FRUGAL_EXT_DEVICES, sizeof(frugal_devices_extension)));
  REQUIRE(ext != nullptr);
  REQUIRE(load("cpu").extension(FRUGAL_EXT_DEVICES, sizeof(frugal_devices_extension)) == nullptr);
  frugal_blob b{nullptr, 0, nullptr};
  frugal_error err{};
  REQUIRE(ext->devices_json(&b, &err) == FRUGAL_OK);
  nlohmann::json j = nlohmann::json::parse(std::string(static_cast<const char*>(b.data), b.size));
  if (b.release) b.release(b.data);
  return j;
}

// The cpu executor runs Relu on two samples.
void cpu_executor_still_works() {
  const std::string file = std::string(FRUGAL_TEST_BINARY_DIR) + "/plugins/cpu.so";
  INFO(file << " is missing: build the cpu target");
  REQUIRE(std::filesystem::exists(file));
  const auto& api = *static_cast<const frugal_executor_api*>(load("cpu").api);
  const std::string model = relu_model();
  frugal_executor* ex = nullptr;
  frugal_error err{};
  REQUIRE(api.create(model.data(), model.size(), nullptr, &ex, &err) == FRUGAL_OK);
  const int64_t dims[2] = {2, 3};
  float in[6] = {-1, 2, -3, 4, -5, 6}, out[6] = {};
  frugal_tensor ti{"x", FRUGAL_DTYPE_FLOAT32, 2, dims, in, sizeof in},
      to{"y", FRUGAL_DTYPE_FLOAT32, 2, dims, out, sizeof out};
  const frugal_status st = api.run(ex, nullptr, &ti, 1, &to, 1, nullptr, &err);
  api.destroy(ex);
  INFO(err.message);
  REQUIRE(st == FRUGAL_OK);
  for (int i = 0; i < 6; ++i) CHECK(out[i] == (in[i] > 0 ? in[i] : 0.0f));
}

}  // namespace

TEST_CASE("without a Vulkan driver, create fails with FRUGAL_ERR_DEVICE and says so", "[.][no-driver]") {
  const auto [status, message] = create_vulkan();
  INFO(message);
  CHECK(status == FRUGAL_ERR_DEVICE);
  CHECK((message.find("no Vulkan driver") != std::string::npos ||
         message.find("no Vulkan device") != std::string::npos));
  CHECK(message.find("VK_ICD_FILENAMES") != std::string::npos);  // the setting that caused it is named
  const nlohmann::json d = devices_json();
  CHECK(d.contains("error"));
  cpu_executor_still_works();
}

TEST_CASE("without a Vulkan loader, create fails with FRUGAL_ERR_DEVICE and names the library",
          "[.][no-loader]") {
  const auto [status, message] = create_vulkan();
  INFO(message);
  CHECK(status == FRUGAL_ERR_DEVICE);
  CHECK(message.find("no Vulkan loader") != std::string::npos);
  CHECK(message.find("no-such-dir/libvulkan.so.1") != std::string::npos);
  // A second attempt gives the same answer (the failure is remembered, not retried into a crash).
  CHECK(create_vulkan().first == FRUGAL_ERR_DEVICE);
  const nlohmann::json d = devices_json();
  REQUIRE(d.contains("error"));
  CHECK(d["error"].get<std::string>().find("no Vulkan loader") != std::string::npos);
  cpu_executor_still_works();
}
