// frugal plugin SDK: a thin, header-only C++ layer over the C ABI in plugin.h.
//
// It makes a plugin short to write and keeps the ABI rules easy to follow:
//   - FRUGAL_DEFINE_PLUGIN(kind, name, version, description, api_table) defines
//     the one exported symbol, `frugal_plugin_entry`, with the version handshake,
//     and checks at compile time that the table's type matches the kind
//     (FRUGAL_DEFINE_PLUGIN_EXT adds extensions; FRUGAL_DEFINE_FACTORY puts
//     several plugins in one shared object);
//   - frugal::sdk::guard(err, [&]{ ... }) runs a body and turns any exception into
//     a status code plus a message in `err`, so nothing ever throws across the ABI;
//   - frugal::sdk::put_blob(out, bytes) hands a buffer to the host together with
//     the function that frees it.
//
// It needs the C++17 standard library, plugin.h, error.h and nlohmann_json, all
// of which come with the installed SDK (target frugal::sdk), so an out-of-tree
// plugin builds exactly as an in-tree one does (see docs/PLUGINS.md).
//
//   static frugal_status my_plan(const char* costs, const char* options,
//                                frugal_blob* out, frugal_error* err) {
//     return frugal::sdk::guard(err, [&] {
//       frugal::sdk::put_blob(out, make_plan_text(costs, options));
//     });
//   }
//   static const frugal_planner_api kApi = {sizeof(frugal_planner_api), &my_plan};
//   FRUGAL_DEFINE_PLUGIN(FRUGAL_KIND_PLANNER, "mine", "1.0", "my planner", kApi)
#ifndef FRUGAL_PLUGIN_SDK_HPP
#define FRUGAL_PLUGIN_SDK_HPP

#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "plugin.h"

// frugal::Error (bad input) and nlohmann_json's exceptions (malformed JSON, missing
// keys, wrong types in the caller's input) map to FRUGAL_ERR_INVALID_ARGUMENT, the
// same in and out of tree: both headers come with the installed SDK (frugal::sdk
// brings nlohmann_json).
#include <nlohmann/json.hpp>

#include "error.h"

namespace frugal {
namespace sdk {

// Throw this to fail with a specific status code; guard() reports its message.
struct Failure : std::runtime_error {
  frugal_status status;
  Failure(frugal_status s, const std::string& message) : std::runtime_error(message), status(s) {}
};

// Shorthands for the codes a plugin most often chooses deliberately.
[[noreturn]] inline void fail_invalid(const std::string& m) { throw Failure(FRUGAL_ERR_INVALID_ARGUMENT, m); }
[[noreturn]] inline void fail_unsupported(const std::string& m) { throw Failure(FRUGAL_ERR_UNSUPPORTED, m); }
[[noreturn]] inline void fail_budget(const std::string& m) { throw Failure(FRUGAL_ERR_BUDGET, m); }
[[noreturn]] inline void fail_device(const std::string& m) { throw Failure(FRUGAL_ERR_DEVICE, m); }

// Writes `message` into err (truncated to fit, always NUL-terminated). err may be NULL.
inline void set_error(frugal_error* err, const char* message) noexcept {
  if (!err) return;
  if (!message) message = "";
  size_t n = std::strlen(message);
  if (n >= FRUGAL_ERROR_CAPACITY) n = FRUGAL_ERROR_CAPACITY - 1;
  std::memcpy(err->message, message, n);
  err->message[n] = '\0';
}

// Returns `status` after writing `message`; for failures found without exceptions.
inline frugal_status error(frugal_error* err, frugal_status status, const std::string& message) noexcept {
  set_error(err, message.c_str());
  return status;
}

// Runs body() and maps what it throws to a status:
//   sdk::Failure            -> its own status
//   std::bad_alloc          -> FRUGAL_ERR_OUT_OF_MEMORY
//   frugal::Error, nlohmann::json::exception,
//   std::invalid_argument, std::out_of_range
//                           -> FRUGAL_ERR_INVALID_ARGUMENT
//   any other exception     -> FRUGAL_ERR_INTERNAL
// body may return void (success is FRUGAL_OK) or a frugal_status of its own.
template <class Body>
frugal_status guard(frugal_error* err, Body&& body) noexcept {
  set_error(err, "");  // a body that returns a failure status without a message leaves ""
  try {
    if constexpr (std::is_void_v<decltype(body())>) {
      body();
      return FRUGAL_OK;
    } else {
      return static_cast<frugal_status>(body());
    }
  } catch (const Failure& e) {
    set_error(err, e.what());
    return e.status;
  } catch (const std::bad_alloc&) {
    set_error(err, "out of memory");
    return FRUGAL_ERR_OUT_OF_MEMORY;
  } catch (const frugal::Error& e) {
    set_error(err, e.what());
    return FRUGAL_ERR_INVALID_ARGUMENT;
  } catch (const nlohmann::json::exception& e) {
    set_error(err, e.what());
    return FRUGAL_ERR_INVALID_ARGUMENT;
  } catch (const std::invalid_argument& e) {
    set_error(err, e.what());
    return FRUGAL_ERR_INVALID_ARGUMENT;
  } catch (const std::out_of_range& e) {
    set_error(err, e.what());
    return FRUGAL_ERR_INVALID_ARGUMENT;
  } catch (const std::exception& e) {
    set_error(err, e.what());
    return FRUGAL_ERR_INTERNAL;
  } catch (...) {  // nothing may cross the C boundary, whatever a library throws
    set_error(err, "unknown exception");
    return FRUGAL_ERR_INTERNAL;
  }
}

// ---- blobs ------------------------------------------------------------------
namespace detail {
inline void release_malloced(void* data) { std::free(data); }
}  // namespace detail

// A blob holding a copy of [data, data+size); the host frees it through release.
// Throws std::bad_alloc (guard() reports it) when memory is short.
inline frugal_blob make_blob(const void* data, size_t size) {
  frugal_blob b{nullptr, 0, nullptr};
  if (size == 0) return b;  // empty: nothing to release
  void* p = std::malloc(size);
  if (!p) throw std::bad_alloc();
  std::memcpy(p, data, size);
  b.data = p;
  b.size = size;
  b.release = &detail::release_malloced;
  return b;
}
inline frugal_blob make_blob(const std::string& s) { return make_blob(s.data(), s.size()); }
template <class T>
frugal_blob make_blob(const std::vector<T>& v) {
  static_assert(std::is_trivially_copyable_v<T>, "blob elements must be plain bytes");
  return make_blob(v.data(), v.size() * sizeof(T));
}

// Stores a blob in the caller's out-parameter; out must be non-NULL.
template <class Bytes>
void put_blob(frugal_blob* out, const Bytes& bytes) {
  if (!out) throw Failure(FRUGAL_ERR_INVALID_ARGUMENT, "output blob pointer is NULL");
  *out = make_blob(bytes);
}

// Borrowed input text: the ABI allows NULL for optional JSON options.
inline std::string text_or(const char* s, const char* fallback) {
  return s ? std::string(s) : std::string(fallback);
}

// ---- the entry point -----------------------------------------------------
// The api table type each kind must supply.
template <int Kind>
struct api_for_kind;
template <>
struct api_for_kind<FRUGAL_KIND_FOLDER> {
  using type = frugal_folder_api;
};
template <>
struct api_for_kind<FRUGAL_KIND_PREDICTOR> {
  using type = frugal_predictor_api;
};
template <>
struct api_for_kind<FRUGAL_KIND_PLANNER> {
  using type = frugal_planner_api;
};
template <>
struct api_for_kind<FRUGAL_KIND_EXECUTOR> {
  using type = frugal_executor_api;
};

// A descriptor for a plugin of `Kind`; the api table's type must match the kind
// (checked at compile time). For FRUGAL_DEFINE_PLUGIN and FRUGAL_DEFINE_FACTORY.
template <int Kind>
constexpr frugal_plugin_descriptor describe_plugin(const char* name, const char* version,
                                                   const char* description,
                                                   const typename api_for_kind<Kind>::type& api,
                                                   const void* (*get_extension)(const char*) = nullptr) {
  return frugal_plugin_descriptor{sizeof(frugal_plugin_descriptor),
                                  FRUGAL_ABI_VERSION,
                                  Kind,
                                  name,
                                  version,
                                  description,
                                  &api,
                                  get_extension};
}

}  // namespace sdk
}  // namespace frugal

// Defines `frugal_plugin_entry` for one plugin. Answers only the ABI version it
// was built for (the host refuses a NULL answer with a message naming the file).
// `api_table` is a static table of the kind's type whose struct_size is
// sizeof(that type). FRUGAL_DEFINE_PLUGIN_EXT also offers extensions: `get_ext`
// is a `const void* (*)(const char* id)` answering NULL for unknown ids.
#define FRUGAL_DEFINE_PLUGIN_EXT(kind, name, version, description, api_table, get_ext)                      \
  extern "C" FRUGAL_EXPORT const frugal_plugin_descriptor* frugal_plugin_entry(uint32_t host_abi_version) { \
    static const frugal_plugin_descriptor descriptor =                                                      \
        ::frugal::sdk::describe_plugin<(kind)>((name), (version), (description), (api_table), (get_ext));   \
    return host_abi_version == FRUGAL_ABI_VERSION ? &descriptor : nullptr;                                  \
  }
#define FRUGAL_DEFINE_PLUGIN(kind, name, version, description, api_table) \
  FRUGAL_DEFINE_PLUGIN_EXT(kind, name, version, description, api_table, nullptr)

// Defines `frugal_plugin_factory` for several plugins in one shared object:
// `descriptors` is a static array of frugal_plugin_descriptor, each made with
// frugal::sdk::describe_plugin<KIND>(...).
#define FRUGAL_DEFINE_FACTORY(descriptors)                                                                  \
  extern "C" FRUGAL_EXPORT const frugal_plugin_descriptor* frugal_plugin_factory(uint32_t host_abi_version, \
                                                                                 uint32_t index) {          \
    const size_t n = sizeof(descriptors) / sizeof((descriptors)[0]);                                        \
    return host_abi_version == FRUGAL_ABI_VERSION && index < n ? &(descriptors)[index] : nullptr;           \
  }

#endif  // FRUGAL_PLUGIN_SDK_HPP
