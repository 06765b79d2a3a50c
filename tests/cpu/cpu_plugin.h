// Test helper: the cpu executor plugin loaded from this build's plugin folder,
// called through its raw C table (so tests see the plugin's own statuses and
// messages, not a client's pre-checks).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "frugal/plugin.h"
#include "graph/graph.h"

namespace cpu_test {

// The executor table of build/plugins/cpu.so (loaded once; fails the test if refused).
const frugal_executor_api& api();

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
class Executor {
 public:
  Executor(const std::string& onnx_bytes, const std::string& options_json = "");
  Executor(const frugal::Graph& g, const std::string& options_json = "");
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

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
  // For calls with hand-made frugal_tensor views.
  frugal_executor* handle() const { return handle_; }

 private:
  frugal_executor* handle_ = nullptr;
};

// Deterministic pseudo-random floats in [lo, hi).
std::vector<float> random_floats(size_t n, uint64_t seed, float lo = -1.0f, float hi = 1.0f);

}  // namespace cpu_test
