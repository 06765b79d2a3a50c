#include "loader/plugin_handshake.h"

#include <cstring>
#include <utility>
#include <vector>

#include "loader/plugin_registry.h"

namespace frugal {

namespace {

using NamedFn = std::pair<const char*, bool>;  // function name, present

std::vector<NamedFn> functions_of(int kind, const void* api) {
  switch (kind) {
    case FRUGAL_KIND_FOLDER: {
      auto t = static_cast<const frugal_folder_api*>(api);
      return {{"fold", t->fold != nullptr}};
    }
    case FRUGAL_KIND_PREDICTOR: {
      auto t = static_cast<const frugal_predictor_api*>(api);
      return {{"predict", t->predict != nullptr}};
    }
    case FRUGAL_KIND_PLANNER: {
      auto t = static_cast<const frugal_planner_api*>(api);
      return {{"plan", t->plan != nullptr}};
    }
    case FRUGAL_KIND_EXECUTOR: {
      auto t = static_cast<const frugal_executor_api*>(api);
      return {{"create", t->create != nullptr},         {"destroy", t->destroy != nullptr},
              {"describe", t->describe != nullptr},     {"layer_bytes", t->layer_bytes != nullptr},
              {"set_budget", t->set_budget != nullptr}, {"run", t->run != nullptr},
              {"time_layer", t->time_layer != nullptr}};
    }
    default:
      return {};
  }
}

}  // namespace

size_t host_api_size(int kind) {
  switch (kind) {
    case FRUGAL_KIND_FOLDER:
      return sizeof(frugal_folder_api);
    case FRUGAL_KIND_PREDICTOR:
      return FRUGAL_PREDICTOR_API_BASE_SIZE;  // train is appended: predictor_client checks for it
    case FRUGAL_KIND_PLANNER:
      return sizeof(frugal_planner_api);
    case FRUGAL_KIND_EXECUTOR:
      return sizeof(frugal_executor_api);
    default:
      return 0;
  }
}

std::string descriptor_problem(const frugal_plugin_descriptor* d) {
  if (!d)
    return "frugal_plugin_entry returned NULL: the plugin does not serve ABI " +
           std::to_string(FRUGAL_ABI_VERSION);
  // struct_size is read first: it is the one field every version has.
  // Fields appended later (get_extension) are read only when the size covers them.
  if (d->struct_size < FRUGAL_DESCRIPTOR_BASE_SIZE)
    return "descriptor is " + std::to_string(d->struct_size) + " bytes, host expects at least " +
           std::to_string(FRUGAL_DESCRIPTOR_BASE_SIZE);
  if (d->abi_version != FRUGAL_ABI_VERSION)
    return "built for ABI " + std::to_string(d->abi_version) + ", host speaks " +
           std::to_string(FRUGAL_ABI_VERSION);
  const size_t need = host_api_size(d->kind);
  if (need == 0)
    return "unknown kind " + std::to_string(d->kind) +
           " (expected 1 folder, 2 predictor, 3 planner or 4 executor)";
  if (!d->name || !*d->name) return "descriptor has no name";
  for (const char* c = d->name; *c; ++c)
    if (static_cast<unsigned char>(*c) <= ' ') return "plugin name contains whitespace or control characters";
  const std::string kind = kind_name(d->kind);
  if (!d->api) return kind + " api table is NULL";
  const size_t have = *static_cast<const size_t*>(d->api);
  if (have < need)
    return kind + " api table is " + std::to_string(have) + " bytes, host needs at least " +
           std::to_string(need);
  for (const auto& [fn, present] : functions_of(d->kind, d->api))
    if (!present) return kind + " api: function '" + fn + "' is NULL";
  return {};
}

const void* LoadedPlugin::extension(const char* id, size_t min_size) const {
  if (!get_extension || !id) return nullptr;
  const void* ext = get_extension(id);
  if (!ext || *static_cast<const size_t*>(ext) < min_size) return nullptr;
  return ext;
}

}  // namespace frugal
