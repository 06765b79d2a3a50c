// The plugin loader: finds shared objects, performs the ABI handshake, checks
// every table before anyone calls through it, and keeps what passed. Anything
// that fails a check is refused with a reason that names the file and the cause;
// the host keeps running.
#pragma once

#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "frugal/plugin.h"  // the FRUGAL_KIND_* values callers pass as `kind`

namespace frugal {

struct LoadedPlugin {
  std::string file, name, version, description;
  int kind = 0;               // frugal_kind
  const void* api = nullptr;  // frugal_<kind>_api*, checked (size and every function)
  void* handle = nullptr;     // dlopen handle; plugins stay loaded for the process
  const void* (*get_extension)(const char* id) = nullptr;  // NULL: no extensions

  // The extension `id` (a FRUGAL_EXT_* string) when the plugin offers it with a
  // struct of at least `min_size` bytes; nullptr otherwise.
  const void* extension(const char* id, size_t min_size) const;
};

struct PluginRefusal {
  std::string file, reason;  // reason starts with the file: "<file>: <cause>"
};

// "folder", "predictor", "planner", "executor"; "unknown" for anything else.
std::string kind_name(int kind);
// The inverse of kind_name (also accepts the plural); 0 when not a kind.
int kind_from_name(const std::string& name);

class PluginRegistry {
 public:
  // Process-wide registry; scans plugin_dirs() on first use.
  static PluginRegistry& instance();

  // An empty registry that scans nothing until asked (tests, tools).
  PluginRegistry() = default;
  PluginRegistry(const PluginRegistry&) = delete;
  PluginRegistry& operator=(const PluginRegistry&) = delete;

  // Scans the build plugin folder, then each FRUGAL_PLUGIN_PATH entry, in order.
  // Files already loaded are skipped, so scanning again only adds new ones.
  void scan();
  // Scans the given folders in order: every regular file ending in ".so", sorted
  // by name within a folder. A missing folder is refused (not an error).
  void scan_dirs(const std::vector<std::string>& dirs);

  // Loads one file (every plugin it holds, when it has a factory). Returns the
  // first plugin, or nullptr with the reason in
  // *why_refused (when given); the refusal is also recorded in refused().
  // Loading a file that is already loaded returns the existing entry.
  const LoadedPlugin* load_file(const std::string& path, std::string* why_refused);

  // Listing and lookup are not synchronised with a concurrent scan: scan first
  // (instance() does), then share the registry between threads.
  const std::vector<LoadedPlugin>& plugins() const { return plugins_; }
  const std::vector<PluginRefusal>& refused() const { return refused_; }
  // The folders scanned so far, in order.
  const std::vector<std::string>& scanned_dirs() const { return scanned_dirs_; }

  const LoadedPlugin* find(int kind, const std::string& name) const;  // nullptr if absent
  // Throws Error naming the kind and name asked for and listing what is available.
  const LoadedPlugin& require(int kind, const std::string& name) const;
  // All loaded plugins of one kind, in load order.
  std::vector<const LoadedPlugin*> of_kind(int kind) const;

 private:
  void scan_dir(const std::string& dir, bool missing_is_refusal);
  void refuse(const std::string& file, const std::string& cause, std::string* why);
  const LoadedPlugin* find_by_canonical(const std::string& canonical) const;
  const LoadedPlugin* add_plugin(const std::string& path, const std::string& canonical, void* handle,
                                 const frugal_plugin_descriptor* d, std::string* why_refused);

  std::deque<LoadedPlugin> storage_;          // stable addresses for find()/require()
  std::vector<LoadedPlugin> plugins_;         // copies, in load order, for listing
  std::vector<std::string> canonical_paths_;  // parallel to storage_
  std::vector<PluginRefusal> refused_;
  std::vector<std::string> scanned_dirs_;
  mutable std::recursive_mutex mutex_;
};

}  // namespace frugal
