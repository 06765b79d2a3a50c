#include "loader/plugin_call.h"

#include <cstring>

namespace frugal {

std::string status_name(int status) {
  switch (status) {
    case FRUGAL_OK:
      return "ok";
    case FRUGAL_ERR_INVALID_ARGUMENT:
      return "invalid argument";
    case FRUGAL_ERR_UNSUPPORTED:
      return "unsupported";
    case FRUGAL_ERR_OUT_OF_MEMORY:
      return "out of memory";
    case FRUGAL_ERR_BUDGET:
      return "budget";
    case FRUGAL_ERR_DEVICE:
      return "device";
    case FRUGAL_ERR_INTERNAL:
      return "internal";
    default:
      return "status " + std::to_string(status);
  }
}

std::string plugin_label(const LoadedPlugin& p) { return p.name + " (" + p.file + ")"; }

void require_kind(const LoadedPlugin& p, int kind) {
  if (p.kind != kind)
    throw Error(plugin_label(p) + ": is a " + kind_name(p.kind) + " plugin, not a " + kind_name(kind));
  if (!p.api) throw Error(plugin_label(p) + ": has no api table");
}

void BlobHolder::reset() {
  // A blob without data owns nothing; release(NULL) is not asked of plugins.
  if (blob_.release && blob_.data) blob_.release(blob_.data);
  blob_ = frugal_blob{nullptr, 0, nullptr};
}

frugal_error fresh_error() {
  frugal_error e;
  e.message[0] = '\0';
  return e;
}

void check_status(const LoadedPlugin& p, int status, const frugal_error& err, const std::string& what) {
  if (status == FRUGAL_OK) return;
  // The plugin may have filled the whole buffer without a terminator.
  const size_t n = strnlen(err.message, FRUGAL_ERROR_CAPACITY);
  std::string message(err.message, n);
  if (message.empty()) message = "failed (" + status_name(status) + ") without a message";
  throw PluginCallError(status, plugin_label(p) + ": " + what + ": " + message);
}

std::string blob_bytes(const LoadedPlugin& p, const BlobHolder& b, const std::string& what, size_t max_bytes,
                       bool allow_empty) {
  const frugal_blob& blob = b.get();
  if (blob.size > 0 && !blob.data)
    throw Error(plugin_label(p) + ": returned OK but the " + what + " has size " + std::to_string(blob.size) +
                " and no data");
  if (blob.size == 0 || !blob.data) {
    if (allow_empty) return {};
    throw Error(plugin_label(p) + ": returned OK but an empty " + what);
  }
  if (blob.size > max_bytes)
    throw Error(plugin_label(p) + ": returned OK but the " + what + " claims " + std::to_string(blob.size) +
                " bytes (limit " + std::to_string(max_bytes) + "); taken for garbage");
  return std::string(static_cast<const char*>(blob.data), blob.size);
}

std::string blob_json_text(const LoadedPlugin& p, const BlobHolder& b, const std::string& what) {
  std::string text = blob_bytes(p, b, what, kMaxJsonBlobBytes, true);
  while (!text.empty() && text.back() == '\0') text.pop_back();  // C strings may carry their NUL
  return text;
}

nlohmann::json blob_json(const LoadedPlugin& p, const BlobHolder& b, const std::string& what,
                         bool allow_empty, const nlohmann::json& empty_value) {
  std::string text = blob_bytes(p, b, what, kMaxJsonBlobBytes, allow_empty);
  while (!text.empty() && text.back() == '\0') text.pop_back();  // C strings may carry their NUL
  if (text.empty()) {
    if (allow_empty) return empty_value;
    throw Error(plugin_label(p) + ": returned OK but an empty " + what);
  }
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(plugin_label(p) + ": the " + what + " it returned is not valid JSON: " + e.what());
  }
}

}  // namespace frugal
