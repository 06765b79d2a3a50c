// Option tables of the bindings ({executor = "cpu", budget = "20MB", ...}):
// unknown names are refused (a typo must not silently fall back to a default),
// values are checked with messages that name the option.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <lua.hpp>
#include <string>
#include <vector>

namespace frugal {

// Throws naming the unknown option and listing the known ones. Absent/nil
// options are fine; anything else than a table is refused.
void check_option_names(lua_State* L, int idx, std::initializer_list<const char*> known);

// A memory size from a Lua number or a string such as "64MB"; `what` names it.
uint64_t check_bytes_value(lua_State* L, int idx, const std::string& what);

// Optional fields of an options table at idx (absent table or nil field: def).
std::string opt_string_field(lua_State* L, int idx, const char* field, const std::string& def);
bool opt_bool_field(lua_State* L, int idx, const char* field, bool def);
double opt_number_field(lua_State* L, int idx, const char* field, double def);
// Optional memory size; returns false when absent.
bool opt_bytes_field(lua_State* L, int idx, const char* field, uint64_t* out);

}  // namespace frugal
