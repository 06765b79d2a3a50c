// Test helper: small graphs built value by value (inputs, constants, nodes), for
// single-op and few-op models fed to the cpu executor and to the float64 reference.
#pragma once

#include <cstdint>
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
  frugal::Graph& graph() { return g_; }

 private:
  frugal::Graph g_;
};

// Host float values -> reference tensor and back.
frugal::RefTensor ref_of(const std::vector<int64_t>& dims, const std::vector<float>& v);

}  // namespace cpu_test
