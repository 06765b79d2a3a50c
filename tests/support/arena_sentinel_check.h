// The arena measured, not derived (both executors): with the test hook
// FRUGAL_ARENA_SENTINEL=1 (plugins/common/arena_sentinel.h) the arena is filled
// with a sentinel before each run and the report says how far the run wrote.
// For random plans on the zoo toys, in an arena of exactly the plan's peak:
// the run succeeds and nothing past the budget is written (the guard after it
// keeps the sentinel). How much of the peak the runs wrote is printed (on the
// toys, not all of it: the model's peak is what is allocated, not what is written).
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "executor_plugin.h"

namespace exec_test {

using MakeExecutorFor = std::function<std::unique_ptr<PluginExecutor>(const frugal::Graph& g)>;

void check_arena_sentinel(const std::string& executor, const MakeExecutorFor& make);

}  // namespace exec_test
