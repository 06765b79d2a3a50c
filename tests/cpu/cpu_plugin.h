// Test helper: the cpu executor plugin loaded from this build's plugin folder,
// called through its raw C table (tests/support/executor_plugin.h).
#pragma once

#include <string>

#include "executor_plugin.h"
#include "memory_model.h"

namespace cpu_test {

using exec_test::HostTensor;
using exec_test::MemoryModel;
using exec_test::random_floats;
using exec_test::Status;
using exec_test::Step;

// The executor table of build/plugins/cpu.so (loaded once; fails the test if refused).
inline const frugal_executor_api& api() { return exec_test::executor_api("cpu"); }

// One cpu executor instance (RAII). create() failures are kept in `created`.
class Executor : public exec_test::PluginExecutor {
 public:
  Executor(const std::string& onnx_bytes, const std::string& options_json = "")
      : PluginExecutor(cpu_test::api(), onnx_bytes, options_json) {}
  Executor(const frugal::Graph& g, const std::string& options_json = "")
      : PluginExecutor(cpu_test::api(), g, options_json) {}
};

}  // namespace cpu_test
