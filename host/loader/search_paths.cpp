#include "loader/search_paths.h"

#include <cstdlib>
#include <filesystem>
#include <sstream>
#include <system_error>

namespace frugal {

namespace fs = std::filesystem;

namespace {

// <prefix>/<relative> when the running executable sits in <prefix>/bin and that
// folder exists; empty otherwise (e.g. when running from the build tree).
std::string installed_dir(const char* relative) {
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (ec || exe.parent_path().filename() != "bin") return "";
  fs::path dir = exe.parent_path().parent_path() / relative;
  return fs::is_directory(dir, ec) ? dir.string() : "";
}

std::string locate(const char* env_var, const char* relative, const char* build_dir) {
  const char* v = std::getenv(env_var);
  if (v && *v) return v;
  std::string installed = installed_dir(relative);
  return installed.empty() ? std::string(build_dir) : installed;
}

}  // namespace

std::string script_dir() {
  return locate("FRUGAL_SCRIPT_DIR", "share/frugal/scripts", FRUGAL_BUILD_SCRIPT_DIR);
}
std::string shader_dir() {
  return locate("FRUGAL_SHADER_DIR", "share/frugal/shaders", FRUGAL_BUILD_SHADER_DIR);
}

std::vector<std::string> plugin_dirs() {
  std::string installed = installed_dir("lib/frugal/plugins");
  std::vector<std::string> dirs{installed.empty() ? std::string(FRUGAL_BUILD_PLUGIN_DIR) : installed};
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
