// ONNX backend conformance of the vulkan executor (the driver is shared with
// the cpu executor: tests/support/conformance.h); every run must also leave the
// validation layer silent.
#include <catch2/catch.hpp>

#include "conformance.h"
#include "vk_test_util.h"

TEST_CASE("every ONNX node test of a supported op matches the reference outputs on Vulkan",
          "[vulkan][conformance]") {
  VK_REQUIRE_DEVICE();
  exec_test::check_onnx_node_conformance(
      "vulkan", [](const std::string& onnx) { return std::make_unique<vk_test::Executor>(onnx); },
      [](exec_test::PluginExecutor& ex) {
        return static_cast<vk_test::Executor&>(ex).validation_errors() == 0
                   ? std::string()
                   : std::string("the validation layer reported errors");
      });
}
