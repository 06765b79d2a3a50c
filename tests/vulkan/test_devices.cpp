// frugal.devices() (host/lua/lua_devices.cpp) and `frugal devices`
// (scripts/devices.lua): the binding reports what the vulkan plugin sees, and
// the script prints one row per device with its memory heaps.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "loader/search_paths.h"
#include "lua/lua_runner.h"
#include "vk_test_util.h"

namespace frugal {
void open_lua_devices(lua_State* L, int module_index);
}

namespace {

// A LuaRunner whose frugal module has the devices binding, and whose print()
// appends to the global table `printed`.
struct DevicesLua {
  frugal::LuaRunner runner;
  DevicesLua() {
    lua_State* L = runner.state();
    lua_getglobal(L, "frugal");
    frugal::open_lua_devices(L, lua_gettop(L));
    lua_pop(L, 1);
    REQUIRE(runner.run_string(
                "printed = {}; print = function(...) local t = {} for i = 1, select('#', ...) do "
                "t[i] = tostring(select(i, ...)) end printed[#printed + 1] = table.concat(t, '\\t') end",
                "capture", {}) == 0);
  }
  std::vector<std::string> printed() {
    lua_State* L = runner.state();
    std::vector<std::string> lines;
    lua_getglobal(L, "printed");
    const lua_Integer n = luaL_len(L, -1);
    for (lua_Integer i = 1; i <= n; ++i) {
      lua_rawgeti(L, -1, i);
      lines.push_back(lua_tostring(L, -1));
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return lines;
  }
};

}  // namespace

TEST_CASE("frugal.devices() lists what the vulkan plugin sees", "[vulkan][devices]") {
  DevicesLua lua;
  const int rc = lua.runner.run_string(R"(
    local info, json = frugal.devices()
    assert(type(json) == "string" and json:find('"vulkan"'), "second result is the JSON text")
    local vk = info.vulkan
    if not vk.available then print("unavailable", vk.error) return end
    assert(#vk.devices >= 1)
    local d = vk.devices[vk.default + 1]
    assert(d.index == vk.default)
    assert(type(d.name) == "string" and #d.name > 0)
    assert(({discrete = 1, integrated = 1, virtual = 1, cpu = 1, other = 1})[d.type])
    assert(d.api_version:match("^%d+%.%d+%.%d+$"))
    assert(#d.heaps >= 1 and d.heaps[1].size > 0)
    assert(d.limits.max_storage_buffer_range > 0)
    print("available", d.name)
  )",
                                       "devices-check", {});
  INFO(lua.runner.last_error());
  REQUIRE(rc == 0);
  const std::vector<std::string> out = lua.printed();
  REQUIRE(out.size() == 1);
  if (vk_test::no_device_reason().empty())
    CHECK(out[0].rfind("available\t", 0) == 0);
  else
    CHECK(out[0].rfind("unavailable\t", 0) == 0);
}

TEST_CASE("frugal devices prints every device with its heaps and marks the default", "[vulkan][devices]") {
  VK_REQUIRE_DEVICE();
  DevicesLua lua;
  const int rc = lua.runner.run_file(frugal::script_dir() + "/devices.lua", {});
  INFO(lua.runner.last_error());
  REQUIRE(rc == 0);
  const std::vector<std::string> out = lua.printed();
  std::string all;
  for (const std::string& line : out) all += line + "\n";
  INFO(all);
  CHECK(all.find("Vulkan loader") != std::string::npos);
  CHECK(all.find("heap 0: ") != std::string::npos);
  CHECK(all.find("* default: device ") != std::string::npos);
  CHECK(out.size() >= 5);
}
