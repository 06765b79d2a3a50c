// Test helper: small graphs built value by value (inputs, constants, nodes), for
// single-op and few-op models fed to the cpu executor and to the float64 reference.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "frugal/model/graph.h"
#include "reference.h"

namespace cpu_test {

class GraphMaker {
 public:
  explicit GraphMaker(int64_t opset = 13);
  // A float32 graph input; dim 0 symbolic ("N") when symbolic_batch.
  void input(const std::string& name, const std::vector<int64_t>& dims, bool symbolic_batch = false);
  void constant(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& values);
  void constant_i64(const std::string& name, const std::vector<int64_t>& dims,
                    const std::vector<int64_t>& values);
  // Appends a node whose name is its first output; returns that node for attributes.
  frugal::Node& node(const std::string& op, const std::vector<std::string>& inputs,
                     const std::string& output);
  void output(const std::string& name);
  // BatchNormalization(in) -> out over `channels`, random parameters from rng:
  // scale in [-scale_max, scale_max], bias in [-bias_max, bias_max], mean in
  // [-0.5, 0.5], variance in [0.2, 2] (constants named out + "_scale", ...).
  void batchnorm(const std::string& in, const std::string& out, int64_t channels, std::mt19937_64& rng,
                 float scale_max = 1.5f, float bias_max = 0.5f);
  frugal::Graph& graph() { return g_; }

 private:
  frugal::Graph g_;
};

// Elements of a tensor of these dims.
int64_t numel(const std::vector<int64_t>& dims);

// Per layer of describe(), its ops joined by "+" ("Conv+BatchNormalization+Relu").
std::vector<std::string> layer_ops(const nlohmann::json& describe);

// Host float values -> reference tensor and back.
frugal::RefTensor ref_of(const std::vector<int64_t>& dims, const std::vector<float>& v);

// One run of check_against_reference: its thread count, describe(), and layer
// 0's workspace at the input's batch.
struct ReferenceRun {
  int threads = 0;
  nlohmann::json describe;
  uint64_t ws_bytes = 0;
};

// Runs `g` (input "x" of dims xd, output "out") on a random input in [-2, 2) at
// 1 and 2 threads, `extra_options` appended to {"threads": T}, and checks
// (Catch) the output against the float64 reference within `tol` relative to
// |reference| plus `tol`.
std::vector<ReferenceRun> check_against_reference(const frugal::Graph& g, const std::vector<int64_t>& xd,
                                                  std::mt19937_64& rng, double tol,
                                                  const std::string& extra_options = "");

}  // namespace cpu_test
