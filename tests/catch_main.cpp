// The one Catch2 main shared by every test executable (compiled once). A test
// that skips (test_skip.h) makes a run that otherwise passed exit with
// kSkipExitCode, which ctest reports as "Skipped" (SKIP_RETURN_CODE), never
// as "Passed"; a failure still exits non-zero with Catch2's failure count.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include "test_skip.h"

namespace frugal_test {

namespace {
bool skipped = false;
}

void note_skip() { skipped = true; }

}  // namespace frugal_test

int main(int argc, char* argv[]) {
  const int failed = Catch::Session().run(argc, argv);
  if (failed != 0) return failed == frugal_test::kSkipExitCode ? failed + 1 : failed;
  return frugal_test::skipped ? frugal_test::kSkipExitCode : 0;
}
