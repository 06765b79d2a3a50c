// The checks a plugin's descriptor and function table must pass before the host
// calls anything through them. Kept apart from the registry so the rules of the
// ABI read in one place.
#pragma once

#include <string>

#include "frugal/plugin.h"

namespace frugal {

// Empty when the descriptor is acceptable for this host; otherwise what is wrong
// ("built for ABI 7, host speaks 1", "unknown kind 9", "planner api: function
// 'plan' is NULL", ...). The descriptor may be NULL.
std::string descriptor_problem(const frugal_plugin_descriptor* d);

// Size of the host's api table for a kind; 0 for an unknown kind.
size_t host_api_size(int kind);

}  // namespace frugal
