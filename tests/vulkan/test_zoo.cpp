// Whole networks of the zoo on Vulkan against the float64 reference: every toy
// at batch 3, MobileNetV2 (depthwise convs, Clip epilogues, residual Adds) and
// AlexNet, whose first fully connected weight (151 MB) exceeds lavapipe's
// 128 MiB storage-buffer range and so runs in column slices.
#include <catch2/catch.hpp>

#include "reduced_run.h"
#include "vk_test_util.h"
#include "zoo/zoo.h"

TEST_CASE("every zoo toy matches the reference", "[vulkan][zoo]") {
  VK_REQUIRE_DEVICE();
  for (const std::string& name : frugal::zoo_names()) {
    if (name.rfind("toy", 0) != 0) continue;
    INFO(name);
    const frugal::Graph g = frugal::build_zoo_model(name, 3);
    vk_test::check_against_reference(g, vk_test::random_inputs(g, 3, 17), "", 1e-4, 1e-3);
  }
}

TEST_CASE("MobileNetV2 and AlexNet at 224x224 match the reference", "[vulkan][zoo][slow]") {
  VK_REQUIRE_DEVICE();
  for (const char* name : {"mobilenet_v2", "alexnet"}) {
    if (frugal_test::reduced_run() && std::string(name) == "alexnet") continue;  // 240 MB of weights
    INFO(name);
    const frugal::Graph g = frugal::build_zoo_model(name, 5);
    const auto r = vk_test::check_against_reference(g, vk_test::random_inputs(g, 1, 23), "", 1e-3, 1e-3);
    if (r.ran) INFO("max |difference| " << r.max_abs);
  }
}
