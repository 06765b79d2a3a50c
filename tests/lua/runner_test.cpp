// LuaRunner: `arg`, error reports with file:line and traceback, the module
// wiring (require, scripts/lib on package.path), the heap cap, parse_bytes.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "lua_fixture.h"

using Catch::Matchers::Contains;

namespace {
std::string write_script(const std::string& name, const std::string& code) {
  std::string path =
      std::string(FRUGAL_TEST_BINARY_DIR) + "/runner_test_" + std::to_string(getpid()) + "_" + name;
  std::ofstream(path) << code;
  return path;
}
}  // namespace

TEST_CASE("runner: arg and ... as the lua interpreter sets them", "[lua][runner]") {
  LuaFixture f;
  std::string path = write_script(
      "args.lua", "n = select('#', ...); first = ...; a0, a1, a2, am1 = arg[0], arg[1], arg[2], arg[-1]\n");
  REQUIRE(f.lua.run_file(path, {"one", "two words"}) == 0);
  CHECK(f.number("n") == 2);
  CHECK(f.string("first") == "one");
  CHECK(f.string("a0") == path);
  CHECK(f.string("a1") == "one");
  CHECK(f.string("a2") == "two words");
  CHECK(f.string("am1") == "frugal");
  std::remove(path.c_str());
}

TEST_CASE("runner: a failing script reports file:line, message and traceback", "[lua][runner]") {
  LuaFixture f;
  std::string path =
      write_script("fail.lua", "local function inner()\n  local x = nil\n  return x.field\nend\ninner()\n");
  CHECK(f.lua.run_file(path, {}) == 1);
  std::string e = f.lua.last_error();
  CHECK_THAT(e, Contains(path + ":3: attempt to index a nil value"));
  CHECK_THAT(e, Contains("stack traceback:"));
  CHECK_THAT(e, Contains(path + ":5: in main chunk"));
  CHECK_THAT(f.err.str(), Contains("frugal: " + path + ":3:"));

  // A C++ exception inside a binding becomes a Lua error at the calling line.
  std::string p2 = write_script("bind.lua", "\n\nlocal t = frugal.tensor(2, -2)\n");
  CHECK(f.lua.run_file(p2, {}) == 1);
  CHECK_THAT(f.lua.last_error(), Contains(p2 + ":3: frugal.tensor: size 2 is -2"));

  std::string p3 = write_script("syntax.lua", "x = = 1\n");
  CHECK(f.lua.run_file(p3, {}) == 1);
  CHECK_THAT(f.lua.last_error(), Contains(p3 + ":1:"));

  CHECK(f.lua.run_file(path + ".missing", {}) == 1);
  CHECK_THAT(f.lua.last_error(), Contains("cannot open " + path + ".missing"));

  // Error objects that are not strings.
  CHECK_THAT(f.error_of("error({})"), Contains("(error object is a table value)"));
  CHECK_THAT(f.error_of("error(setmetatable({}, {__tostring = function() return 'custom' end}))"),
             Contains("custom"));
  for (const auto& p : {path, p2, p3}) std::remove(p.c_str());

  // The state is still usable after errors.
  f.run("ok = 1");
  CHECK(f.number("ok") == 1);
}

TEST_CASE("runner: module wiring", "[lua][runner]") {
  LuaFixture f;
  CHECK(f.boolean("require('frugal') == frugal"));
  CHECK(f.string("frugal.version") == FRUGAL_VERSION);
  CHECK(f.string("frugal.script_dir()") == std::string(FRUGAL_SOURCE_DIR) + "/scripts");
  CHECK(f.string("require('textfmt').commas(4089184256)") == "4,089,184,256");
  CHECK(f.string("require('textfmt').shape({1, 'N', 3})") == "[1, N, 3]");
}

TEST_CASE("runner: the Lua heap is capped", "[lua][runner]") {
  setenv("FRUGAL_LUA_MEMORY", "64MiB", 1);
  LuaFixture f;
  unsetenv("FRUGAL_LUA_MEMORY");
  CHECK_THAT(f.error_of("local s = string.rep('x', 100 * 1000 * 1000)"), Contains("not enough memory"));
  CHECK_THAT(f.error_of("local t = {} for i = 1, 1e9 do t[i] = i end"), Contains("not enough memory"));
  f.run("small = string.rep('x', 1000)");  // still usable
  CHECK(f.number("#small") == 1000);
}

TEST_CASE("parse_bytes and format_bytes from Lua", "[lua][bytes]") {
  LuaFixture f;
  CHECK(f.number("frugal.parse_bytes('20MB')") == 20e6);
  CHECK(f.number("frugal.parse_bytes('64MiB')") == 64.0 * 1024 * 1024);
  CHECK(f.number("frugal.parse_bytes('1.5GB')") == 1.5e9);
  CHECK(f.number("frugal.parse_bytes('1048576')") == 1048576);
  CHECK(f.number("frugal.parse_bytes(4096)") == 4096);
  CHECK(f.string("frugal.format_bytes(20000000)") == "20.0 MB");
  CHECK(f.string("frugal.format_bytes(64 * 1024 * 1024, true)") == "64.0 MiB");
  CHECK_THAT(f.error_of("frugal.parse_bytes('20XB')"), Contains("unknown unit 'XB'"));
  CHECK_THAT(f.error_of("frugal.parse_bytes(-1)"), Contains("must be >= 0"));
  CHECK_THAT(f.error_of("frugal.parse_bytes({})"), Contains("string expected"));
}
