#include "lua/lua_runner.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <new>
#include <regex>

#include "cli/byte_size.h"
#include "frugal/error.h"
#include "loader/search_paths.h"
#include "lua/lua_frugal.h"

namespace frugal {

namespace {

// The error message as a string; error objects that are not strings are described.
const char* error_text(lua_State* L) {
  const char* msg = lua_tostring(L, 1);
  if (msg) return msg;
  if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING) return lua_tostring(L, -1);
  return lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
}

int message_only(lua_State* L) {
  lua_pushstring(L, error_text(L));
  return 1;
}

// Error message plus traceback.
int message_handler(lua_State* L) {
  luaL_traceback(L, L, error_text(L), 1);
  return 1;
}

size_t default_heap_limit() {
  if (const char* env = std::getenv("FRUGAL_LUA_MEMORY")) {
    try {
      int64_t v = parse_bytes(env);
      if (v > 0) return static_cast<size_t>(v);
    } catch (const std::exception&) {
      // An unparsable override falls back to the default.
    }
  }
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return static_cast<size_t>(4) << 30;
  return static_cast<size_t>(pages) * static_cast<size_t>(page) / 2;
}

int open_frugal_global(lua_State* L) {
  open_frugal_module(L);
  return 1;
}

// The standard libraries, `frugal` (global and require-able, the same table),
// and scripts/lib on package.path (scripts share helpers: require "argparse").
int open_libraries(lua_State* L) {
  luaL_openlibs(L);
  luaL_requiref(L, "frugal", open_frugal_global, 1);
  lua_pop(L, 1);
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "path");
  const std::string path = script_dir() + "/lib/?.lua;" + (lua_tostring(L, -1) ? lua_tostring(L, -1) : "");
  lua_pop(L, 1);
  lua_pushstring(L, path.c_str());
  lua_setfield(L, -2, "path");
  lua_pop(L, 1);
  return 0;
}

}  // namespace

void* LuaRunner::allocate(void* ud, void* ptr, size_t old_size, size_t new_size) {
  auto* heap = static_cast<HeapLimit*>(ud);
  if (!ptr) old_size = 0;  // old_size then encodes the object type, not a size
  if (new_size == 0) {
    std::free(ptr);
    heap->used -= old_size;
    return nullptr;
  }
  if (new_size > old_size && heap->used - old_size + new_size > heap->limit) return nullptr;
  void* p = std::realloc(ptr, new_size);
  if (p) heap->used = heap->used - old_size + new_size;
  return p;
}

LuaRunner::LuaRunner() : err_(&std::cerr) {
  heap_.limit = default_heap_limit();
  L_ = lua_newstate(&LuaRunner::allocate, &heap_);
  if (!L_) throw std::bad_alloc();
  // As lua.c's pmain: all set-up runs protected, so running out of memory
  // there is an error, not an abort.
  lua_pushcfunction(L_, open_libraries);
  if (lua_pcall(L_, 0, 0, 0) != LUA_OK) {
    const std::string msg = lua_tostring(L_, -1) ? lua_tostring(L_, -1) : "(no message)";
    lua_close(L_);
    L_ = nullptr;
    throw Error("cannot set up Lua: " + msg);
  }
}

void LuaRunner::set_debug(bool on) {
  lua_getglobal(L_, "frugal");
  lua_pushboolean(L_, on);
  lua_setfield(L_, -2, "debug");
  lua_pop(L_, 1);
}

std::string user_error_message(const std::string& message) {
  static const std::regex position(R"(^[^\n:]*\.lua:\d+: )");
  static const std::regex binding(R"(^(frugal\.\w+|tensor:\w+|model:\w+|executor:\w+): )");
  std::string m = std::regex_replace(message, position, "", std::regex_constants::format_first_only);
  return std::regex_replace(m, binding, "", std::regex_constants::format_first_only);
}

LuaRunner::~LuaRunner() {
  if (L_) lua_close(L_);
}

int LuaRunner::run_file(const std::string& path, const std::vector<std::string>& args) {
  return run_loaded(luaL_loadfile(L_, path.c_str()), path, args);
}

int LuaRunner::run_string(const std::string& code, const std::string& chunkname,
                          const std::vector<std::string>& args) {
  int status = luaL_loadbuffer(L_, code.data(), code.size(), ("=" + chunkname).c_str());
  return run_loaded(status, chunkname, args);
}

int LuaRunner::run_loaded(int load_status, const std::string& script, const std::vector<std::string>& args) {
  last_error_.clear();
  int base = lua_gettop(L_) - 1;  // below the loaded chunk (or its error message)
  if (load_status == LUA_OK) {
    // arg, as lua.c builds it.
    lua_createtable(L_, static_cast<int>(args.size()), 2);
    lua_pushstring(L_, "frugal");
    lua_rawseti(L_, -2, -1);
    lua_pushlstring(L_, script.data(), script.size());
    lua_rawseti(L_, -2, 0);
    for (size_t i = 0; i < args.size(); ++i) {
      lua_pushlstring(L_, args[i].data(), args[i].size());
      lua_rawseti(L_, -2, static_cast<lua_Integer>(i) + 1);
    }
    lua_setglobal(L_, "arg");

    luaL_checkstack(L_, static_cast<int>(args.size()) + 4, "too many script arguments");
    lua_pushcfunction(L_, tracebacks_ ? message_handler : message_only);
    lua_insert(L_, base + 1);  // under the chunk
    for (const std::string& a : args) lua_pushlstring(L_, a.data(), a.size());
    load_status = lua_pcall(L_, static_cast<int>(args.size()), 0, base + 1);
  }
  if (load_status == LUA_OK) {
    lua_settop(L_, base);
    return 0;
  }
  const char* msg = lua_tostring(L_, -1);
  last_error_ = msg ? msg : "(error object is not a string)";
  if (!tracebacks_) last_error_ = user_error_message(last_error_);
  std::fflush(stdout);  // keep what the script printed before the error
  *err_ << "frugal: " << last_error_ << std::endl;
  lua_settop(L_, base);
  return 1;
}

}  // namespace frugal
