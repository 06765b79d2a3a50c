// Runs Lua chunks in an in-process LuaRunner and reads results back, so tests
// can drive the frugal module the way scripts do.
#pragma once

#include <catch2/catch.hpp>
#include <sstream>
#include <string>

#include "lua/lua_runner.h"

struct LuaFixture {
  frugal::LuaRunner lua;
  std::ostringstream err;

  LuaFixture() { lua.set_error_stream(&err); }

  // Runs `code`; fails the test with the Lua error if it fails.
  void run(const std::string& code) {
    int rc = lua.run_string(code, "test", {});
    INFO(lua.last_error());
    REQUIRE(rc == 0);
  }

  // Runs `code`, expecting it to fail; returns the message (without traceback).
  std::string error_of(const std::string& code) {
    int rc = lua.run_string(code, "test", {});
    REQUIRE(rc == 1);
    std::string msg = lua.last_error();
    return msg.substr(0, msg.find("\nstack traceback"));
  }

  // Evaluates a Lua expression.
  double number(const std::string& expr) {
    eval(expr);
    int ok = 0;
    double v = lua_tonumberx(lua.state(), -1, &ok);
    lua_pop(lua.state(), 1);
    REQUIRE(ok);
    return v;
  }
  std::string string(const std::string& expr) {
    eval(expr);
    const char* s = lua_tostring(lua.state(), -1);
    std::string out = s ? s : "<not a string>";
    lua_pop(lua.state(), 1);
    return out;
  }
  bool boolean(const std::string& expr) {
    eval(expr);
    bool b = lua_toboolean(lua.state(), -1);
    lua_pop(lua.state(), 1);
    return b;
  }

 private:
  void eval(const std::string& expr) {
    lua_State* L = lua.state();
    std::string code = "return " + expr;
    int rc = luaL_loadbuffer(L, code.data(), code.size(), "=expr");
    if (rc == LUA_OK) rc = lua_pcall(L, 0, 1, 0);
    if (rc != LUA_OK) {
      std::string msg = lua_tostring(L, -1) ? lua_tostring(L, -1) : "?";
      lua_pop(L, 1);
      FAIL("Lua expression failed: " << expr << ": " << msg);
    }
  }
};
