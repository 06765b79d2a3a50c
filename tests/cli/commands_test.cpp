// Script summaries and command-name suggestions.
#include "cli/commands.h"

#include <unistd.h>

#include <catch2/catch.hpp>
#include <fstream>

#include "frugal/error.h"

using Catch::Matchers::Contains;

namespace {
std::string scratch_dir() {
  std::string d = std::string(FRUGAL_TEST_BINARY_DIR) + "/commands_test_" + std::to_string(getpid());
  REQUIRE(system(("mkdir -p '" + d + "'").c_str()) == 0);
  return d;
}
}  // namespace

TEST_CASE("commands: the summary is the first comment line", "[cli]") {
  std::string dir = scratch_dir();
  std::ofstream(dir + "/demo.lua") << "#!/usr/bin/env frugal\n"
                                      "-- frugal demo: show a demo\n"
                                      "-- usage: frugal demo FILE\n"
                                      "--   FILE  the input\n"
                                      "local x = 1\n"
                                      "-- not part of the usage\n";
  std::ofstream(dir + "/bare.lua") << "print('no header')\n";
  std::ofstream(dir + "/_private.lua") << "-- frugal _private: hidden\n";
  std::ofstream(dir + "/notes.txt") << "-- frugal notes: not a script\n";
  frugal::ScriptCommand c = frugal::read_script_command(dir + "/demo.lua");
  CHECK(c.name == "demo");
  CHECK(c.summary == "show a demo");

  std::vector<frugal::ScriptCommand> all = frugal::list_script_commands(dir);
  REQUIRE(all.size() == 2);  // sorted; _private and .txt left out
  CHECK(all[0].name == "bare");
  CHECK(all[0].summary.empty());
  CHECK(all[1].name == "demo");
  CHECK(frugal::list_script_commands(dir + "/missing").empty());
  CHECK_THROWS_WITH(frugal::read_script_command(dir + "/missing.lua"), Contains(dir + "/missing.lua"));
  REQUIRE(system(("rm -rf '" + dir + "'").c_str()) == 0);
}

TEST_CASE("commands: closest_name", "[cli]") {
  std::vector<std::string> known{"info", "plugins", "plan", "run", "bench"};
  CHECK(frugal::closest_name("inf", known) == "info");
  CHECK(frugal::closest_name("ifno", known) == "info");
  CHECK(frugal::closest_name("plugin", known) == "plugins");
  CHECK(frugal::closest_name("pln", known) == "plan");
  CHECK(frugal::closest_name("benchmark", known) == "");
  CHECK(frugal::closest_name("zzzzzz", known) == "");
  CHECK(frugal::closest_name("x", {}) == "");
}
