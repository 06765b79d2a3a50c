// Profiling in Lua:
//
//   costs, info = frugal.profile(model_or_executor, {
//       executor = "cpu", threads = T, device = N,   -- when given a model
//       upto = 16,              -- the table covers batch sizes 1..upto (default 8)
//       batches = {1, 2, 4, 8}, -- measure only these (others are interpolated);
//                               -- upto defaults to the largest, and may not be below it
//       repeats = 5,            -- timed runs per layer and batch (after a warm-up)
//       cache = true,           -- false: measure again (the new table replaces the cached one)
//       cache_dir = PATH,       -- default $XDG_CACHE_HOME/frugal/costs or ~/.cache/...
//       progress = true,        -- on stderr: a status line on a terminal, else a line per tenth of the work
//   })
//
// costs is the cost table as a plain Lua table in the planner's format (see
// host/profiler/profiler.h): give it to frugal.plan, or frugal.save_json(costs,
// "costs.json"). info = {cached = bool, cache_file = PATH or nil, seconds =
// measuring time, measured_batches = {...}, warnings = {...}}; warnings (e.g. a
// corrupt cache file) are also written to stderr.
// Given an executor (frugal.executor), that one is measured as it is (its
// threads and budget); a budget too small for a layer is an error naming it.
#pragma once

#include <lua.hpp>

namespace frugal {

void open_lua_profile(lua_State* L, int module_index);

}  // namespace frugal
