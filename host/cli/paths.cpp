#include "cli/paths.h"

#include <cstdlib>
#include <sstream>

namespace frugal {

namespace {
std::string env_or(const char* var, const char* fallback) {
  const char* v = std::getenv(var);
  return (v && *v) ? std::string(v) : std::string(fallback);
}
}  // namespace

std::string script_dir() { return env_or("FRUGAL_SCRIPT_DIR", FRUGAL_BUILD_SCRIPT_DIR); }
std::string shader_dir() { return env_or("FRUGAL_SHADER_DIR", FRUGAL_BUILD_SHADER_DIR); }

std::vector<std::string> plugin_dirs() {
  std::vector<std::string> dirs{FRUGAL_BUILD_PLUGIN_DIR};
  const char* extra = std::getenv("FRUGAL_PLUGIN_PATH");
  if (extra) {
    std::stringstream ss(extra);
    std::string d;
    while (std::getline(ss, d, ':'))
      if (!d.empty()) dirs.push_back(d);
  }
  return dirs;
}

}  // namespace frugal
