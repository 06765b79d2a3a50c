// The arena measured, not derived (both executors): with the test hook
// FRUGAL_ARENA_SENTINEL=1 (plugins/common/arena_sentinel.h) the arena is filled
// with a sentinel before each run and the report says how far the run wrote.
// For random plans on the zoo toys, in an arena of exactly the plan's peak:
// the run succeeds and nothing past the budget is written (the guard after it
// keeps the sentinel). With `writes_whole_peak` each run must also reach the
// peak's last byte (the peak is needed, not just enough): true on Vulkan; not
// on the CPU, whose convolutions reserve one im2col buffer per thread and leave
// a slot unwritten when the other thread took every chunk.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "executor_plugin.h"

namespace exec_test {

using MakeExecutorFor = std::function<std::unique_ptr<PluginExecutor>(const frugal::Graph& g)>;

void check_arena_sentinel(const std::string& executor, const MakeExecutorFor& make, bool writes_whole_peak);

}  // namespace exec_test
