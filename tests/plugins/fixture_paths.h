// Where the test fixtures (built by tests/plugins/CMakeLists.txt) lie.
#pragma once

#include <dlfcn.h>

#include <string>

#include "loader/plugin_registry.h"

namespace fixture_paths {

inline std::string dir(const std::string& sub) { return std::string(FRUGAL_FIXTURE_PLUGIN_DIR) + "/" + sub; }
inline std::string scan_dir() { return dir("scan"); }
inline std::string in_scan(const std::string& file) { return scan_dir() + "/" + file; }

// A counter a fixture exports next to frugal_plugin_entry (see fixtures/counted_blob.h).
inline int call_counter(const frugal::LoadedPlugin& p, const char* symbol) {
  auto fn = reinterpret_cast<int (*)()>(dlsym(p.handle, symbol));
  return fn ? fn() : -1000;
}

// One registry over the scan folder, shared by the tests of a binary.
inline frugal::PluginRegistry& scanned_registry() {
  static frugal::PluginRegistry r;
  static bool done = false;
  if (!done) {
    r.scan_dirs({scan_dir()});
    done = true;
  }
  return r;
}

}  // namespace fixture_paths
