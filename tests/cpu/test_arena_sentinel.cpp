// The cpu arena measured with a sentinel (tests/support/arena_sentinel_check.h).
#include <catch2/catch.hpp>

#include "arena_sentinel_check.h"
#include "cpu_plugin.h"

TEST_CASE("runs write inside their budget and need all of it (sentinel in the arena, one thread)",
          "[cpu][arena]") {
  exec_test::check_arena_sentinel(
      "cpu (1 thread)",
      [](const frugal::Graph& g) { return std::make_unique<cpu_test::Executor>(g, "{\"threads\": 1}"); },
      /*writes_whole_peak=*/true);
}

// With two threads a convolution reserves two im2col slots, and the second
// stays unwritten when one thread takes every chunk: within the budget still.
TEST_CASE("runs write inside their budget (sentinel in the arena, two threads)", "[cpu][arena]") {
  exec_test::check_arena_sentinel(
      "cpu (2 threads)",
      [](const frugal::Graph& g) { return std::make_unique<cpu_test::Executor>(g, "{\"threads\": 2}"); },
      /*writes_whole_peak=*/false);
}
