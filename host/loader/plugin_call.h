// What every host-side client does around a call into a plugin: own the blobs the
// plugin hands back (released exactly once, whatever happens), turn a failure
// status into a frugal::Error that names the plugin, and refuse answers that are
// OK in status but unusable in content (NULL data, absurd sizes, bad JSON).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>

#include "frugal/error.h"
#include "frugal/plugin.h"
#include "loader/plugin_registry.h"

namespace frugal {

// A failed plugin call; `status` is the plugin's frugal_status (e.g.
// FRUGAL_ERR_BUDGET), for callers that react to one kind of failure.
struct PluginCallError : Error {
  int status;
  PluginCallError(int s, const std::string& message) : Error(message), status(s) {}
};

// "ok", "invalid argument", "unsupported", "out of memory", "budget", "device",
// "internal", or "status N" for a value outside the enum.
std::string status_name(int status);

// "<plugin name> (<file>)": how messages name a plugin.
std::string plugin_label(const LoadedPlugin& p);

// Throws Error unless p is of `kind`; returns p's api table as T.
template <class T>
const T& plugin_api(const LoadedPlugin& p, int kind);
void require_kind(const LoadedPlugin& p, int kind);

// A blob received from a plugin. Empty until the plugin fills it; release is
// called once on destruction.
class BlobHolder {
 public:
  BlobHolder() = default;
  ~BlobHolder() { reset(); }
  BlobHolder(const BlobHolder&) = delete;
  BlobHolder& operator=(const BlobHolder&) = delete;

  frugal_blob* out() { return &blob_; }  // pass to the plugin
  const frugal_blob& get() const { return blob_; }
  bool empty() const { return blob_.data == nullptr || blob_.size == 0; }
  void reset();

 private:
  frugal_blob blob_{nullptr, 0, nullptr};
};

// Size limits for what a plugin may hand back; anything larger is taken for an
// uninitialised size rather than read.
constexpr size_t kMaxJsonBlobBytes = size_t(1) << 30;   // 1 GiB of JSON text
constexpr size_t kMaxModelBlobBytes = size_t(1) << 34;  // 16 GiB of ONNX

// A fresh error buffer (empty message) for one call.
frugal_error fresh_error();

// Throws PluginCallError("<label>: <what>: <message>") when status != FRUGAL_OK.
void check_status(const LoadedPlugin& p, int status, const frugal_error& err, const std::string& what);

// The blob's bytes, checked: non-empty unless allow_empty, data non-NULL when
// size > 0, size under `max_bytes`. `what` names the content ("plan", "report").
std::string blob_bytes(const LoadedPlugin& p, const BlobHolder& b, const std::string& what, size_t max_bytes,
                       bool allow_empty);
// The blob parsed as JSON (trailing NULs ignored); empty gives `empty_value`
// when allow_empty, else an error.
nlohmann::json blob_json(const LoadedPlugin& p, const BlobHolder& b, const std::string& what,
                         bool allow_empty, const nlohmann::json& empty_value = nullptr);
// The blob as JSON text, unparsed, its trailing NULs dropped ("" when empty).
std::string blob_json_text(const LoadedPlugin& p, const BlobHolder& b, const std::string& what);

// ---- template definition ----
template <class T>
const T& plugin_api(const LoadedPlugin& p, int kind) {
  require_kind(p, kind);
  return *static_cast<const T*>(p.api);
}

}  // namespace frugal
