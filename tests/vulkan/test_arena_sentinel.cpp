// The vulkan arena (one device buffer) measured with a sentinel
// (tests/support/arena_sentinel_check.h); the validation layer stays silent.
#include <catch2/catch.hpp>

#include "arena_sentinel_check.h"
#include "vk_test_util.h"

TEST_CASE("runs write inside their budget and need all of it (sentinel in the arena)", "[vulkan][arena]") {
  VK_REQUIRE_DEVICE();
  exec_test::check_arena_sentinel(
      "vulkan", [](const frugal::Graph& g) { return std::make_unique<vk_test::Executor>(g); },
      /*writes_whole_peak=*/true);
}
