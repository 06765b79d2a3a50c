// Test helper: an executor plugin (cpu, vulkan) loaded from this build's plugin
// folder and called through its raw C table, so tests see the plugin's own
// statuses and messages, not a client's pre-checks.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "frugal/model/graph.h"
#include "frugal/plugin.h"

namespace frugal {
struct LoadedPlugin;
}

namespace exec_test {

// The executor table of <build>/plugins/<name>.so (loaded once per name; fails
// the test if refused).
const frugal_executor_api& executor_api(const std::string& name);
// Its placement extension (plugin.h, FRUGAL_EXT_PLACEMENT); fails the test when not offered.
const frugal_placement_extension& placement_extension(const std::string& name);
// Its host-weights extension with create_releasing (FRUGAL_EXT_HOST_WEIGHTS); fails the test when not
// offered.
const frugal_host_weights_extension& host_weights_extension(const std::string& name);
// The plugin as the host's loader holds it (for ExecutorClient).
const frugal::LoadedPlugin& executor_plugin(const std::string& name);

// A float32 tensor owned by the test.
struct HostTensor {
  std::string name;
  std::vector<int64_t> dims;
  std::vector<float> data;
};

// The outcome of one ABI call.
struct Status {
  frugal_status code = FRUGAL_OK;
  std::string message;
  bool ok() const { return code == FRUGAL_OK; }
};

// One executor instance (RAII). create() failures are kept in `created`.
class PluginExecutor {
 public:
  PluginExecutor(const frugal_executor_api& api, const std::string& onnx_bytes,
                 const std::string& options_json = "");
  PluginExecutor(const frugal_executor_api& api, const frugal::Graph& g,
                 const std::string& options_json = "");
  // Adopts a handle made by another entry point (an extension's create); destroys it.
  PluginExecutor(const frugal_executor_api& api, frugal_executor* handle) : api_(api), handle_(handle) {}
  ~PluginExecutor();
  PluginExecutor(const PluginExecutor&) = delete;
  PluginExecutor& operator=(const PluginExecutor&) = delete;

  Status created;
  bool ok() const { return handle_ != nullptr; }

  nlohmann::json describe() const;
  frugal_layer_bytes layer_bytes(int layer, int batch) const;
  Status set_budget(uint64_t bytes);
  // Runs; outputs are (re)allocated from describe()'s shapes with dim 0 = batch
  // unless given with dims already. report receives the parsed report.
  Status run(const std::vector<HostTensor>& inputs, std::vector<HostTensor>& outputs,
             const nlohmann::json& plan = nullptr, nlohmann::json* report = nullptr);
  Status time_layer(int layer, int batch, int repeats, double& median, double& spread);
  // The placement extension's place (plan null: whole batch); `placed` receives its JSON.
  Status place(const frugal_placement_extension& ext, const nlohmann::json& plan, int32_t batch,
               uint64_t capacity, nlohmann::json* placed);
  // For calls with hand-made frugal_tensor views.
  frugal_executor* handle() const { return handle_; }

 private:
  const frugal_executor_api& api_;
  frugal_executor* handle_ = nullptr;
};

// Deterministic pseudo-random floats in [lo, hi).
std::vector<float> random_floats(size_t n, uint64_t seed, float lo = -1.0f, float hi = 1.0f);

// One random input per entry of describe()'s "inputs", with dim 0 = batch
// (seeds seed, seed + 1, ...).
std::vector<HostTensor> random_inputs(const nlohmann::json& describe, int64_t batch, uint64_t seed);

}  // namespace exec_test
