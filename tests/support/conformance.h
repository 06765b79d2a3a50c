// ONNX backend conformance, one driver for every executor plugin: each node
// test in libonnx-testdata whose ops the executors support runs through the
// plugin and must match output_*.pb within ONNX's default tolerances (rtol
// 1e-3, atol 1e-7). Parameter inputs (weights, shapes, bounds) are inlined as
// initializers. It prints what it ran and what it skipped, with the reason; a
// test of a supported op may be refused only if listed (and must then really
// be refused). Both executors compile models through the same layer graph
// (plugins/common), so they share the list.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "executor_plugin.h"

namespace exec_test {

// Makes an executor of the plugin under test for a model.
using MakeExecutor = std::function<std::unique_ptr<PluginExecutor>(const std::string& onnx_bytes)>;
// Called after each successful run; a non-empty answer fails that node test.
using AfterRun = std::function<std::string(PluginExecutor&)>;

// The whole check, as Catch2 assertions; `executor` names it in the printout.
void check_onnx_node_conformance(const std::string& executor, const MakeExecutor& make,
                                 const AfterRun& after_run = nullptr);

}  // namespace exec_test
