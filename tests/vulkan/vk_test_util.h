// Test helpers for the Vulkan executor: the plugin loaded from this build's
// plugin folder and called through its raw C table; a skip when the machine
// has no Vulkan device; small graphs built through the IR with random
// weights; and the check of a graph's outputs against the float64 reference
// evaluator (tests/reference).
#pragma once

#include <cstdint>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "executor_plugin.h"
#include "frugal/model/graph.h"
#include "frugal/plugin.h"
#include "memory_model.h"
#include "reference.h"
#include "test_skip.h"

namespace vk_test {

// The executor table of <build>/plugins/vulkan.so (loaded once).
inline const frugal_executor_api& api() { return exec_test::executor_api("vulkan"); }

// Whether the Vulkan tests must run here: FRUGAL_REQUIRE_VULKAN=1 (set by
// ctest in builds configured with FRUGAL_REQUIRE_VULKAN, as CI's are).
bool vulkan_required();

// What a failed create() of a trivial executor means for the Vulkan tests.
// Only a machine without Vulkan (no loader, no driver, no device: messages
// that begin "no Vulkan ") may skip, and only where Vulkan is not required;
// anything else -- a missing validation layer, a missing or corrupt shader, a
// driver error -- is a failure.
enum class Verdict { Run, Skip, Fail };
Verdict verdict_for_create(frugal_status code, const std::string& message, bool required);

// "" when a Vulkan device can run an executor here, else why not (printed
// once). FAILs the test when the reason is not one that may skip.
const std::string& no_device_reason();

// Use at the top of a test: when the machine has no Vulkan and Vulkan is not
// required, prints "SKIPPED: no Vulkan driver or device (...)" and returns; the
// executable then exits with the skip code, which ctest reports as a skip.
#define VK_REQUIRE_DEVICE()                                                                         \
  do {                                                                                              \
    if (!vk_test::no_device_reason().empty()) {                                                     \
      std::cout << "SKIPPED: no Vulkan driver or device (" << vk_test::no_device_reason() << ")\n"; \
      frugal_test::note_skip();                                                                     \
      return;                                                                                       \
    }                                                                                               \
  } while (0)

using exec_test::HostTensor;
using exec_test::MemoryModel;
using exec_test::random_floats;
using exec_test::Status;
using exec_test::Step;

// x [N,3,12,12] -> conv(8)+BN+Relu -> maxpool 2 -> conv(4) -> flatten -> gemm(10): a chain.
frugal::Graph chain_model();

// Reference inputs (float64) as float32 host tensors.
std::vector<HostTensor> host_inputs(const std::map<std::string, frugal::RefTensor>& in);
// max |got - want| (a NaN counts as 1e30). Fails the test when the sizes differ.
double max_diff(const std::vector<float>& got, const frugal::RefTensor& want);

// One vulkan executor instance (RAII). create() failures are kept in `created`.
class Executor : public exec_test::PluginExecutor {
 public:
  Executor(const std::string& onnx_bytes, const std::string& options_json = "")
      : PluginExecutor(vk_test::api(), onnx_bytes, options_json) {}
  Executor(const frugal::Graph& g, const std::string& options_json = "")
      : PluginExecutor(vk_test::api(), g, options_json) {}
  uint64_t validation_errors() const;  // from describe()
};

// Builds a Graph through the IR. Weights are random (deterministic per name).
struct GraphMaker {
  frugal::Graph g;
  uint64_t seed = 1;

  explicit GraphMaker(int64_t opset = 13) { g.opsets = {{"", opset}}; }
  // A float32 input; dim -1 is the symbolic batch "N".
  GraphMaker& input(const std::string& name, const std::vector<int64_t>& dims);
  // A random float32 initializer in [lo, hi).
  std::string weight(const std::string& name, const std::vector<int64_t>& dims, float lo = -1.0f,
                     float hi = 1.0f);
  std::string floats(const std::string& name, const std::vector<int64_t>& dims,
                     const std::vector<float>& values);
  std::string ints(const std::string& name, const std::vector<int64_t>& values);
  frugal::Node& node(const std::string& op, const std::string& name, std::vector<std::string> in,
                     std::vector<std::string> out);
  // Conv "conv" of x [N, C, ...] into `out`: random weights "w" [M, C, k, k] and bias "b" [M],
  // stride s, dilation d, pads {top, left, bottom, right}.
  frugal::Node& conv(const std::string& x, const std::string& out, int64_t C, int64_t M, int64_t k, int64_t s,
                     int64_t d, const std::vector<int64_t>& pads);
  GraphMaker& output(const std::string& name);
};

// Random inputs for every graph input at batch `batch` (symbolic dim 0).
std::map<std::string, frugal::RefTensor> random_inputs(const frugal::Graph& g, int64_t batch, uint64_t seed);

struct Comparison {
  bool ran = false;
  std::string error;                   // create/run failure
  double max_abs = 0, max_excess = 0;  // max |got - want|, max of |got - want| - (atol + rtol |want|)
  nlohmann::json report, description;
};

// Runs g on the plugin and on the reference; every output element must satisfy
// |got - want| <= atol + rtol * |want|. CHECKs that, and that the validation
// layer reported no error.
Comparison check_against_reference(const frugal::Graph& g,
                                   const std::map<std::string, frugal::RefTensor>& inputs,
                                   const std::string& options_json = "", double atol = 1e-4,
                                   double rtol = 1e-3);

}  // namespace vk_test
