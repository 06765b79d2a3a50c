// The on-disk cache of measured cost tables. Measuring a network takes seconds to
// minutes; the same model on the same executor, device, threads and batch list
// gives the same table, so it is kept in
//   $XDG_CACHE_HOME/frugal/costs/   (else ~/.cache/frugal/costs/)
// one file per key: {"key": {...}, "costs": {...}}. The file name is a hash of
// the key; the key inside is compared on load, so a hash collision is a miss.
// A file that cannot be read or parsed is ignored with a warning (and replaced
// by the next store).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "frugal/model/graph.h"

namespace frugal {

// 16 hex digits of FNV-1a 64 over the bytes (not cryptographic: cache keys only).
std::string fnv1a64_hex(const std::string& bytes);

// A model's key in the cache: FNV-1a over its ONNX structure and every
// initializer's name and bytes, without a serialized copy of the weights.
std::string model_fingerprint(const Graph& g);

// The default cache folder, "" when neither XDG_CACHE_HOME nor HOME is set.
std::string default_cost_cache_dir();

class CostCache {
 public:
  // dir "": the default folder; an unusable folder disables the cache.
  explicit CostCache(std::string dir = "");

  const std::string& dir() const { return dir_; }
  bool enabled() const { return !dir_.empty(); }
  std::string path_for(const nlohmann::json& key) const;

  // The cached table for `key`, or nothing. A corrupt or mismatched file adds a
  // line to *warning (when given) and is a miss.
  std::optional<nlohmann::json> load(const nlohmann::json& key, std::string* warning) const;
  // Stores the table (creating the folder); failures add a warning, never throw.
  void store(const nlohmann::json& key, const nlohmann::json& costs, std::string* warning) const;

 private:
  std::string dir_;
};

}  // namespace frugal
