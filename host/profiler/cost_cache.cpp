#include "profiler/cost_cache.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "frugal/model/onnx_export.h"
#include "profiler/cost_numbers.h"
#include "profiler/json_file.h"

namespace frugal {

namespace {

bool is_dir(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// mkdir -p; false with the reason in *why.
bool make_dirs(const std::string& path, std::string* why) {
  std::string partial;
  size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    partial = path.substr(0, pos);
    if (partial.empty() || is_dir(partial)) continue;
    if (mkdir(partial.c_str(), 0755) != 0 && errno != EEXIST) {
      *why = "cannot create '" + partial + "': " + std::strerror(errno);
      return false;
    }
  }
  return true;
}

void add_warning(std::string* warning, const std::string& line) {
  if (!warning) return;
  if (!warning->empty()) *warning += "\n";
  *warning += line;
}

}  // namespace

namespace {

constexpr uint64_t kFnvOffset = 14695981039346656037ull;

uint64_t fnv1a64(uint64_t h, const void* data, size_t n) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 1099511628211ull;
  }
  return h;
}

std::string hex64(uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

}  // namespace

std::string fnv1a64_hex(const std::string& bytes) {
  return hex64(fnv1a64(kFnvOffset, bytes.data(), bytes.size()));
}

std::string model_fingerprint(const Graph& g) {
  const std::string structure = save_onnx_bytes(g, WeightsAs::Omitted);
  uint64_t h = fnv1a64(kFnvOffset, structure.data(), structure.size());
  for (const auto& [name, t] : g.tensors) {
    if (!t.is_initializer) continue;
    h = fnv1a64(h, name.data(), name.size());
    h = fnv1a64(h, t.data.data(), t.data.size());
  }
  return hex64(h);
}

std::string default_cost_cache_dir() {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  if (xdg && *xdg) return std::string(xdg) + "/frugal/costs";
  const char* home = std::getenv("HOME");
  if (home && *home) return std::string(home) + "/.cache/frugal/costs";
  return "";
}

CostCache::CostCache(std::string dir) : dir_(dir.empty() ? default_cost_cache_dir() : std::move(dir)) {}

std::string CostCache::path_for(const nlohmann::json& key) const {
  return dir_ + "/" + fnv1a64_hex(key.dump()) + ".json";
}

std::optional<nlohmann::json> CostCache::load(const nlohmann::json& key, std::string* warning) const {
  if (!enabled()) return std::nullopt;
  const std::string path = path_for(key);
  struct stat st;
  if (stat(path.c_str(), &st) != 0) return std::nullopt;  // a plain miss
  try {
    nlohmann::json j = read_json_file(path);
    if (!j.is_object() || !j.contains("key") || !j.contains("costs") || !j["costs"].is_object() ||
        !j["costs"].contains("layers"))
      throw std::runtime_error("not a cost cache entry (needs \"key\" and \"costs\" with \"layers\")");
    if (j["key"] != key) return std::nullopt;  // same hash, other key
    check_cost_numbers(j["costs"], "its costs");
    return j["costs"];
  } catch (const std::exception& e) {
    add_warning(warning, "warning: ignoring unusable cost cache file " + path + ": " + e.what() +
                             " (measuring again)");
    return std::nullopt;
  }
}

void CostCache::store(const nlohmann::json& key, const nlohmann::json& costs, std::string* warning) const {
  if (!enabled()) return;
  std::string why;
  if (!make_dirs(dir_, &why)) {
    add_warning(warning, "warning: cost cache not written: " + why);
    return;
  }
  try {
    write_json_file({{"key", key}, {"costs", costs}}, path_for(key), -1);
  } catch (const std::exception& e) {
    add_warning(warning, std::string("warning: cost cache not written: ") + e.what());
  }
}

}  // namespace frugal
