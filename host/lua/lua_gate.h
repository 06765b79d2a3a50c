// Gated networks in Lua (docs/GATING.md):
//
//   gated, report = frugal.gate(model, {activity = 0.5, layers = {"conv2", ...}, seed = 0,
//                                       threshold = 0.5, input = tensor, batch = 8, executor = "cpu"})
//
// Inserts LKAM gates in front of the named convs (all that can be gated when
// `layers` is absent, or every `every`-th of them) and calibrates each one's bias on the input (or `batch`
// random samples from `seed`) so that `activity` of the kernels are on. report:
// {gated = {{conv=, channels=, activity=}, ...}, skipped = {{conv=, reason=}, ...}}.
#pragma once

#include <lua.hpp>

namespace frugal {

void open_lua_gate(lua_State* L, int module_index);

}  // namespace frugal
