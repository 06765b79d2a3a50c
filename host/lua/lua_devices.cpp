// frugal.devices(): the compute devices the executor plugins can use, for
// `frugal devices`. The Vulkan list comes from the vulkan executor plugin itself
// (its FRUGAL_EXT_DEVICES extension, plugin.h), so it shows
// exactly what that plugin sees and would pick, with no Vulkan code in the host:
//
//   local info, json = frugal.devices()
//   info = { vulkan = { available = true, loader = "libvulkan.so.1", default = 0,
//                       validation = false, error = nil,
//                       devices = { { index = 0, name = "...", type = "cpu", driver = "...",
//                                     api_version = "1.3.230", heaps = { { size = N,
//                                     device_local = true, budget = N, usage = N }, ... },
//                                     limits = {...}, ... }, ... } } }
//   json: the same as JSON text.
// A missing plugin, loader or device is not an error: `available` is false and
// `error` says why.
//
// Registered by open_lua_devices() (lua_devices.h) from open_frugal_module().
#include "lua/lua_devices.h"

#include <lua.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "frugal/plugin.h"
#include "loader/plugin_registry.h"
#include "lua/lua_binding.h"
#include "lua/lua_json.h"

namespace frugal {

namespace {

nlohmann::json vulkan_devices() {
  PluginRegistry& r = PluginRegistry::instance();
  r.scan();
  const LoadedPlugin* p = r.find(FRUGAL_KIND_EXECUTOR, "vulkan");
  if (!p) {
    std::string dirs;
    for (const std::string& d : r.scanned_dirs()) dirs += (dirs.empty() ? "" : ", ") + d;
    return {{"error", "the vulkan executor plugin (vulkan.so) was not found in " +
                          (dirs.empty() ? std::string("no folder") : dirs)}};
  }
  auto ext = static_cast<const frugal_devices_extension*>(
      p->extension(FRUGAL_EXT_DEVICES, sizeof(frugal_devices_extension)));
  if (!ext || !ext->devices_json)
    return {{"error", p->file + " does not list devices (no " FRUGAL_EXT_DEVICES " extension)"}};
  frugal_blob blob{nullptr, 0, nullptr};
  frugal_error err{};
  const frugal_status st = ext->devices_json(&blob, &err);
  if (st != FRUGAL_OK) return {{"error", p->file + ": " + err.message}};
  std::string text(static_cast<const char*>(blob.data), blob.size);
  if (blob.release) blob.release(blob.data);
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return {{"error", p->file + " sent a device list that is not a JSON object"}};
  j["plugin"] = p->file;
  return j;
}

int l_devices(lua_State* L) {
  nlohmann::json vk = vulkan_devices();
  vk["available"] = !vk.contains("error") && vk.contains("devices") && !vk["devices"].empty();
  const nlohmann::json all = {{"vulkan", vk}};
  push_json(L, all);
  const std::string text = all.dump();
  lua_pushlstring(L, text.data(), text.size());
  return 2;
}

const LuaBinding kFunctions[] = {{"devices", l_devices}, {nullptr, nullptr}};

}  // namespace

void open_lua_devices(lua_State* L, int module_index) {
  register_bindings(L, module_index, kFunctions, "frugal.");
}

}  // namespace frugal
