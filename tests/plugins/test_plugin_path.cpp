// FRUGAL_PLUGIN_PATH: several entries, scanned in order, the first one found wins.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <optional>

#include "fixture_paths.h"
#include "frugal/plugin.h"
#include "loader/plugin_registry.h"
#include "loader/search_paths.h"

using namespace frugal;
using fixture_paths::dir;

namespace {

// Sets FRUGAL_PLUGIN_PATH for one test and restores the old value.
struct ScopedPluginPath {
  std::optional<std::string> old;
  explicit ScopedPluginPath(const std::string& value) {
    if (const char* v = std::getenv("FRUGAL_PLUGIN_PATH")) old = v;
    setenv("FRUGAL_PLUGIN_PATH", value.c_str(), 1);
  }
  ~ScopedPluginPath() {
    if (old)
      setenv("FRUGAL_PLUGIN_PATH", old->c_str(), 1);
    else
      unsetenv("FRUGAL_PLUGIN_PATH");
  }
};

bool refused_with(const PluginRegistry& r, const std::string& file, const std::string& text) {
  for (const auto& x : r.refused())
    if (x.file == file && x.reason.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("FRUGAL_PLUGIN_PATH entries are scanned in order after the build folder", "[plugins][unit]") {
  const std::string a = dir("path_a"), b = dir("path_b"), missing = dir("no_such_folder");
  ScopedPluginPath env(a + ":" + missing + "::" + b);
  const std::vector<std::string> expected_dirs = {FRUGAL_BUILD_PLUGIN_DIR, a, missing, b};
  CHECK(plugin_dirs() == expected_dirs);

  PluginRegistry r;
  r.scan();
  CHECK(r.scanned_dirs() == expected_dirs);
  const LoadedPlugin* ordered = r.find(FRUGAL_KIND_PLANNER, "ordered");
  REQUIRE(ordered != nullptr);
  CHECK(ordered->version == "a");
  CHECK(ordered->file == a + "/ordered.so");
  CHECK(refused_with(r, b + "/ordered.so",
                     "duplicate planner plugin 'ordered': already loaded from " + a + "/ordered.so"));
  CHECK(r.find(FRUGAL_KIND_PLANNER, "only_b") != nullptr);  // the later folder was scanned all the same
  CHECK(refused_with(r, missing, "plugin folder does not exist"));
}

TEST_CASE("reversing FRUGAL_PLUGIN_PATH reverses which duplicate wins", "[plugins][unit]") {
  const std::string a = dir("path_a"), b = dir("path_b");
  ScopedPluginPath env(b + ":" + a);
  PluginRegistry r;
  r.scan();
  const LoadedPlugin* ordered = r.find(FRUGAL_KIND_PLANNER, "ordered");
  REQUIRE(ordered != nullptr);
  CHECK(ordered->version == "b");
  CHECK(refused_with(r, a + "/ordered.so", "already loaded from " + b + "/ordered.so"));
}
