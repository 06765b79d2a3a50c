#include "loader/plugin_registry.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <system_error>

#include "frugal/error.h"
#include "frugal/plugin.h"
#include "loader/plugin_handshake.h"
#include "loader/search_paths.h"

namespace fs = std::filesystem;

namespace frugal {

namespace {

constexpr int kKinds[] = {FRUGAL_KIND_FOLDER, FRUGAL_KIND_PREDICTOR, FRUGAL_KIND_PLANNER,
                          FRUGAL_KIND_EXECUTOR};

std::string canonical_or_same(const std::string& path) {
  std::error_code ec;
  fs::path c = fs::canonical(path, ec);
  return ec ? path : c.string();
}

// dlerror() usually repeats the path; keep only what it says about it.
std::string dl_message(const std::string& path) {
  const char* e = dlerror();
  std::string m = e ? e : "unknown dlopen error";
  const std::string prefix = path + ": ";
  if (m.compare(0, prefix.size(), prefix) == 0) m.erase(0, prefix.size());
  return m;
}

// Plugins that run OpenMP next to a thread pool of their own (the CPU
// executor: oneDNN's convolutions on OpenMP, its other kernels on its pool)
// need OpenMP's workers to sleep when a parallel region ends: libgomp's default
// spins for milliseconds, and the spinning workers take the cores from the
// pool's threads in the layers between. libgomp reads this once, when the first
// plugin that links it is loaded; a setting of the user's is kept.
void openmp_threads_sleep_when_idle() {
  if (!std::getenv("OMP_WAIT_POLICY") && !std::getenv("GOMP_SPINCOUNT"))
    setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
}

bool ends_with_so(const std::string& name) {
  return name.size() > 3 && name.compare(name.size() - 3, 3, ".so") == 0;
}

}  // namespace

std::string kind_name(int kind) {
  switch (kind) {
    case FRUGAL_KIND_FOLDER:
      return "folder";
    case FRUGAL_KIND_PREDICTOR:
      return "predictor";
    case FRUGAL_KIND_PLANNER:
      return "planner";
    case FRUGAL_KIND_EXECUTOR:
      return "executor";
    default:
      return "unknown";
  }
}

int kind_from_name(const std::string& name) {
  for (int k : kKinds)
    if (name == kind_name(k) || name == kind_name(k) + "s") return k;
  return 0;
}

PluginRegistry& PluginRegistry::instance() {
  static PluginRegistry registry;
  static std::once_flag scanned;
  std::call_once(scanned, [] { registry.scan(); });
  return registry;
}

void PluginRegistry::scan() {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  const std::vector<std::string> dirs = plugin_dirs();
  for (size_t i = 0; i < dirs.size(); ++i)
    // The compiled-in build folder is absent in an installed or fresh tree: that is
    // normal. A FRUGAL_PLUGIN_PATH entry that does not exist is worth reporting.
    scan_dir(dirs[i], /*missing_is_refusal=*/i > 0);
}

void PluginRegistry::scan_dirs(const std::vector<std::string>& dirs) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  for (const auto& d : dirs) scan_dir(d, true);
}

void PluginRegistry::scan_dir(const std::string& dir, bool missing_is_refusal) {
  if (std::find(scanned_dirs_.begin(), scanned_dirs_.end(), dir) == scanned_dirs_.end())
    scanned_dirs_.push_back(dir);
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    if (missing_is_refusal) refuse(dir, "plugin folder does not exist or is not a folder", nullptr);
    return;
  }
  std::vector<std::string> files;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code fec;
    if (ends_with_so(name) && it->is_regular_file(fec)) files.push_back(it->path().string());
  }
  if (ec) {
    refuse(dir, "cannot list plugin folder: " + ec.message(), nullptr);
    return;
  }
  std::sort(files.begin(), files.end());  // deterministic order: the first duplicate wins
  for (const auto& f : files) load_file(f, nullptr);
}

void PluginRegistry::refuse(const std::string& file, const std::string& cause, std::string* why) {
  PluginRefusal r{file, file + ": " + cause};
  if (why) *why = r.reason;
  // Scanning twice must not list the same refusal twice.
  for (const auto& old : refused_)
    if (old.file == r.file && old.reason == r.reason) return;
  refused_.push_back(std::move(r));
}

const LoadedPlugin* PluginRegistry::find_by_canonical(const std::string& canonical) const {
  for (size_t i = 0; i < storage_.size(); ++i)
    if (canonical_paths_[i] == canonical) return &storage_[i];
  return nullptr;
}

// The descriptors a shared object offers: through its factory (several plugins
// in one file) or its single entry. A NULL in the list is a refusal to serve
// this ABI; the handshake check reports it.
static std::vector<const frugal_plugin_descriptor*> descriptors_of(void* handle) {
  std::vector<const frugal_plugin_descriptor*> out;
  if (void* f = dlsym(handle, FRUGAL_FACTORY_SYMBOL)) {
    auto factory = reinterpret_cast<frugal_plugin_factory_fn>(f);
    constexpr uint32_t kMaxPerFile = 256;  // a factory that never answers NULL
    for (uint32_t i = 0; i < kMaxPerFile; ++i) {
      const frugal_plugin_descriptor* d = factory(FRUGAL_ABI_VERSION, i);
      if (!d) break;
      out.push_back(d);
    }
    if (out.empty()) out.push_back(nullptr);
    return out;
  }
  if (void* e = dlsym(handle, FRUGAL_ENTRY_SYMBOL))
    out.push_back(reinterpret_cast<frugal_plugin_entry_fn>(e)(FRUGAL_ABI_VERSION));
  return out;
}

const LoadedPlugin* PluginRegistry::load_file(const std::string& path, std::string* why_refused) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  if (why_refused) why_refused->clear();
  const std::string canonical = canonical_or_same(path);
  if (const LoadedPlugin* p = find_by_canonical(canonical)) return p;

  std::error_code ec;
  if (!fs::exists(path, ec)) {
    refuse(path, "no such file", why_refused);
    return nullptr;
  }
  openmp_threads_sleep_when_idle();
  // RTLD_NOW: a missing symbol is found here, not in the middle of a run.
  // RTLD_LOCAL: two plugins may carry the same internal symbols.
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    refuse(path, "not a loadable shared object: " + dl_message(path), why_refused);
    return nullptr;
  }
  dlerror();
  if (!dlsym(handle, FRUGAL_ENTRY_SYMBOL) && !dlsym(handle, FRUGAL_FACTORY_SYMBOL)) {
    dlclose(handle);  // none of its code was called: safe to unmap
    refuse(path,
           "no symbol " FRUGAL_ENTRY_SYMBOL " or " FRUGAL_FACTORY_SYMBOL
           " (not a frugal plugin, or the symbol is not exported)",
           why_refused);
    return nullptr;
  }
  // From here on the plugin's own code has run and may have registered callbacks
  // or started threads, so a refused plugin stays mapped; it is never called again.
  const LoadedPlugin* first = nullptr;
  for (const frugal_plugin_descriptor* d : descriptors_of(handle)) {
    const LoadedPlugin* p = add_plugin(path, canonical, handle, d, why_refused);
    if (!first) first = p;
  }
  return first;
}

const LoadedPlugin* PluginRegistry::add_plugin(const std::string& path, const std::string& canonical,
                                               void* handle, const frugal_plugin_descriptor* d,
                                               std::string* why_refused) {
  const std::string problem = descriptor_problem(d);
  if (!problem.empty()) {
    refuse(path, problem, why_refused);
    return nullptr;
  }
  if (const LoadedPlugin* first = find(d->kind, d->name)) {
    const std::string cause = "duplicate " + kind_name(d->kind) + " plugin '" + d->name +
                              "': already loaded from " + first->file + " (the first one found wins)";
    refuse(path, cause, why_refused);
    return nullptr;
  }
  LoadedPlugin p;
  p.file = path;
  p.name = d->name;
  p.version = d->version ? d->version : "";
  p.description = d->description ? d->description : "";
  p.kind = d->kind;
  p.api = d->api;
  p.get_extension = d->struct_size >= sizeof(frugal_plugin_descriptor) ? d->get_extension : nullptr;
  p.handle = handle;
  storage_.push_back(p);
  canonical_paths_.push_back(canonical);
  plugins_.push_back(p);
  return &storage_.back();
}

const LoadedPlugin* PluginRegistry::find(int kind, const std::string& name) const {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  for (const auto& p : storage_)
    if (p.kind == kind && p.name == name) return &p;
  return nullptr;
}

std::vector<const LoadedPlugin*> PluginRegistry::of_kind(int kind) const {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  std::vector<const LoadedPlugin*> out;
  for (const auto& p : storage_)
    if (p.kind == kind) out.push_back(&p);
  return out;
}

const LoadedPlugin& PluginRegistry::require(int kind, const std::string& name) const {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  if (const LoadedPlugin* p = find(kind, name)) return *p;
  const std::string k = kind_name(kind);
  std::string msg = "no " + k + " plugin named '" + name + "'";
  const auto available = of_kind(kind);
  if (available.empty()) {
    msg += "; no " + k + " plugins are loaded";
  } else {
    msg += "; available " + k + " plugins:";
    for (size_t i = 0; i < available.size(); ++i)
      msg += (i ? ", " : " ") + available[i]->name + " (" + available[i]->file + ")";
  }
  msg += ". Searched:";
  if (scanned_dirs_.empty()) msg += " nothing yet";
  for (size_t i = 0; i < scanned_dirs_.size(); ++i) msg += (i ? ", " : " ") + scanned_dirs_[i];
  if (!refused_.empty())
    msg += ". " + std::to_string(refused_.size()) +
           " plugin file(s) were refused (see `frugal plugins`), first: " + refused_.front().reason;
  throw Error(msg);
}

}  // namespace frugal
