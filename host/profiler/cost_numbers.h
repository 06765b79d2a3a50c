// The numbers of a cost table, checked where the host reads one (a file, the
// cost cache, a table to fit): every per-batch time and byte count a finite
// number >= 0. A NaN measurement is written to JSON as null, and an overflow
// as 1e400, so a table can carry values that are not real numbers; refusing
// them here names the file and the field before a planner or a fit sees them.
// The planner plugin validates the table's structure in full (docs/COSTS.md).
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace frugal {

// Throws frugal::Error "ORIGIN: layer I 'NAME' FIELD[K] (batch K+1) is ..." on
// the first entry of time_s, time_spread_s, measured_time_s, in_bytes,
// out_bytes or ws_bytes that is not a finite number >= 0, or when "layers" is
// missing or not a list of objects.
void check_cost_numbers(const nlohmann::json& costs, const std::string& origin);

}  // namespace frugal
