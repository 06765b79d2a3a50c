// ONNX backend conformance of the cpu executor (the driver is shared with the
// vulkan executor: tests/support/conformance.h).
#include <catch2/catch.hpp>

#include "conformance.h"
#include "cpu_plugin.h"

TEST_CASE("every ONNX node test of a supported op matches the reference outputs", "[cpu][conformance]") {
  exec_test::check_onnx_node_conformance("cpu", [](const std::string& onnx) {
    return std::make_unique<cpu_test::Executor>(onnx, "{\"threads\": 2}");
  });
}
