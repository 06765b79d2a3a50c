// Helpers shared by every Lua binding of the frugal module.
//
// A binding is a plain `int f(lua_State*)` registered through register_bindings:
// it runs inside a wrapper that turns any std::exception (frugal::Error,
// std::bad_alloc, ...) into a Lua error "frugal.NAME: message", so no C++
// exception reaches Lua's C API and a script can pcall any binding. Lua is built
// as C++ here: lua_error unwinds with its own exception type, which the wrapper
// lets through (it catches std::exception only), and destructors run.
#pragma once

#include <cstdint>
#include <lua.hpp>
#include <string>
#include <vector>

namespace frugal {

struct LuaBinding {
  const char* name;  // Lua-side name, also used in error messages
  int (*fn)(lua_State*);
  const char* label = nullptr;  // error-message name when not prefix + name (metamethods)
};

// Sets table[name] = wrapped fn for each entry of a {nullptr, nullptr}-terminated
// array with static storage. `prefix` goes before names in error messages
// ("frugal." for module functions, "tensor:" for methods).
void register_bindings(lua_State* L, int table_index, const LuaBinding* list, const char* prefix);

// Argument helpers, for use inside bindings: they throw frugal::Error (or raise
// Lua's "bad argument" error) naming the argument.
std::string check_string_arg(lua_State* L, int idx);
// A positive or zero int64 (e.g. a size, a batch, a seed).
int64_t check_nonnegative_integer(lua_State* L, int idx, const char* what);
// A list of integers from a Lua sequence at idx.
std::vector<int64_t> check_integer_list(lua_State* L, int idx, const char* what);
// Optional field of a table at idx; returns def when absent or nil.
int64_t opt_integer_field(lua_State* L, int idx, const char* field, int64_t def);

// Pushers.
void push_string_list(lua_State* L, const std::vector<std::string>& items);
void push_integer_list(lua_State* L, const std::vector<int64_t>& items);

}  // namespace frugal
