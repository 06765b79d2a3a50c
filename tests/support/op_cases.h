// Small models that exercise one op each (standalone, fused after a Conv, and
// in the chains the gated convolution builds: Greater -> Cast -> Mul, Where),
// run on an executor plugin and compared with the float64 reference evaluator.
// Every executor's test runs the same list (tests/cpu/test_reference_ops.cpp,
// tests/vulkan/test_kernels.cpp), as ncnn's tests run every backend per layer.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "executor_plugin.h"
#include "frugal/model/graph.h"

namespace exec_test {

struct OpCase {
  std::string name;
  frugal::Graph graph;  // float32 inputs with a symbolic batch (run at batch 2)
};

// The cases of the ops added through the op registry (Sub, Div, GlobalMaxPool,
// HardSigmoid, HardSwish, LeakyRelu, Greater, GreaterOrEqual, Cast, Where, Resize).
std::vector<OpCase> registry_op_cases();

// Runs `c` on a plugin executor (made by `make`) at batch 2, whole and under a
// plan of one sample per step, on inputs in [-2, 2); "" when every output is
// within 1e-5 + 1e-4 |reference| of the float64 reference, else what differed.
// `after_run` (may be null) checks the executor after the runs ("" when fine).
std::string check_op_case(const OpCase& c, const frugal_executor_api& api,
                          const std::function<std::string(PluginExecutor&)>& after_run = nullptr);

}  // namespace exec_test
