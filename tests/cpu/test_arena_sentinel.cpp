// The cpu arena measured with a sentinel (tests/support/arena_sentinel_check.h).
#include <catch2/catch.hpp>

#include "arena_sentinel_check.h"
#include "cpu_plugin.h"

TEST_CASE("runs write inside their budget and need all of it (sentinel in the arena)", "[cpu][arena]") {
  exec_test::check_arena_sentinel("cpu", [](const frugal::Graph& g) {
    return std::make_unique<cpu_test::Executor>(g, "{\"threads\": 2}");
  });
}
