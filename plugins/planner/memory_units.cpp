#include "memory_units.h"

#include <string>

#include "frugal/error.h"

namespace frugal::planner {

MemoryUnits make_memory_units(uint64_t budget_bytes, uint64_t unit_bytes, int max_units) {
  MemoryUnits u;
  if (unit_bytes == 0) {
    unit_bytes = (budget_bytes + kDefaultUnitsPerBudget - 1) / kDefaultUnitsPerBudget;
    if (unit_bytes == 0) unit_bytes = 1;
  }
  u.unit_bytes = unit_bytes;
  uint64_t units = budget_bytes / unit_bytes;
  if (units > static_cast<uint64_t>(max_units))
    throw Error("options: budget_bytes " + std::to_string(budget_bytes) + " is " + std::to_string(units) +
                " units of unit_bytes " + std::to_string(unit_bytes) + "; at most " +
                std::to_string(max_units) + " units are supported (choose a larger unit_bytes)");
  u.budget_units = static_cast<int>(units);
  return u;
}

}  // namespace frugal::planner
