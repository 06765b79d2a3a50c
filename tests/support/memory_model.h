// Test helper: the executor's memory model recomputed from what the plugin
// publishes (describe() and layer_bytes()), independently of its own code:
// inputs placed first; a step allocates out + ws, frees ws, then frees the input
// samples whose consumers have all run; network outputs stay. Also random valid
// plans for a given request size.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "executor_plugin.h"

namespace exec_test {

struct Step {
  int layer;
  int64_t first, count;
};

class MemoryModel {
 public:
  explicit MemoryModel(PluginExecutor& ex);
  // Peak live bytes of `steps` for a request of `batch` samples.
  uint64_t peak(const std::vector<Step>& steps, int64_t batch) const;
  std::vector<Step> whole_batch(int64_t batch) const;
  // A random order of steps that is valid (inputs ready, each sample once per
  // layer, each layer's samples in order).
  std::vector<Step> random_plan(int64_t batch, std::mt19937_64& rng) const;
  static nlohmann::json to_json(const std::vector<Step>& steps, const nlohmann::json& names);
  const nlohmann::json& description() const { return d_; }

 private:
  PluginExecutor& ex_;
  nlohmann::json d_;
  size_t layers_ = 0;
  std::vector<std::vector<int>> layer_inputs_;  // tensor ids
  std::vector<int> layer_output_;
  std::vector<std::string> tensor_names_;
  std::vector<uint64_t> sample_bytes_;
  std::vector<int> producer_;
  std::vector<int> consumer_count_;
  std::vector<bool> is_output_;
  std::vector<int> inputs_;
  int tensor_id(const std::string& name);
};

}  // namespace exec_test
