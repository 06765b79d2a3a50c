// Memory discretisation for the DP tables: the budget is rounded DOWN to whole
// units and every need is rounded UP, so a plan found in units never needs more
// than the budget in bytes (the plan records the unit).
#pragma once

#include <cstdint>

namespace frugal::planner {

struct MemoryUnits {
  uint64_t unit_bytes = 1;
  int budget_units = 0;  // floor(budget / unit)

  // Units that cover `bytes` (rounded up).
  int64_t up(uint64_t bytes) const { return static_cast<int64_t>((bytes + unit_bytes - 1) / unit_bytes); }
  uint64_t bytes(int64_t units) const { return static_cast<uint64_t>(units) * unit_bytes; }
};

constexpr int kDefaultUnitsPerBudget = 256;

// unit_bytes == 0 picks the default: the smallest unit that gives the budget at
// most kDefaultUnitsPerBudget units. Throws frugal::Error when the budget has
// more than max_units units (the DP tables would not fit).
MemoryUnits make_memory_units(uint64_t budget_bytes, uint64_t unit_bytes, int max_units);

}  // namespace frugal::planner
