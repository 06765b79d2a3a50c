// What moving arena bytes costs on an executor: the price the host puts on the
// bytes a plan's compactions move (docs/COSTS.md, "Moves"). Measured with the
// executor's placement extension (plugin.h, FRUGAL_EXT_PLACEMENT) in arenas of
// 1, 4, 16, ... 256 MiB, up to the first that holds every layer's output at
// batch_max: a small arena moves at the cache's speed, a large one at memory's,
// so the price depends on the budget a plan runs in.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

#include "loader/executor_client.h"

namespace frugal {

// Adds "move": {"arena_bytes": [...], "s_per_byte": [...], "repeats", "measured_by"}
// to `costs` when the executor offers the extension; returns whether it did.
bool add_move_price(ExecutorClient& ex, int repeats, nlohmann::json& costs);

// Seconds per moved byte in an arena of `capacity` bytes: interpolated in
// log(arena_bytes) between the measured sizes, the end values beyond them.
// -1 when the table has no (well-formed) "move".
double move_s_per_byte(const nlohmann::json& costs, uint64_t capacity);

}  // namespace frugal
