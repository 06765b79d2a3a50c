// Skipping a test visibly: note_skip() makes the executable exit with
// kSkipExitCode when nothing failed, and ctest entries registered with
// SKIP_RETURN_CODE kSkipExitCode are then reported as skipped, not passed.
#pragma once

namespace frugal_test {

constexpr int kSkipExitCode = 77;
void note_skip();

}  // namespace frugal_test
