// The three planner plugins (one shared object, a factory) through the C ABI:
// handshake, plans, error codes.
#include <dlfcn.h>

#include <catch2/catch.hpp>
#include <string>

#include "frugal/plugin.h"
#include "plan_check.h"
#include "planner_test_util.h"

using namespace frugal::planner;
using nlohmann::json;

namespace {

struct Loaded {
  void* handle = nullptr;
  const frugal_plugin_descriptor* desc = nullptr;
  explicit Loaded(uint32_t index) {
    const std::string path = std::string(FRUGAL_TEST_BINARY_DIR) + "/plugins/planners.so";
    handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    INFO(path << ": " << (handle ? "" : dlerror()));
    REQUIRE(handle);
    CHECK(dlsym(handle, FRUGAL_ENTRY_SYMBOL) == nullptr);  // the factory is the one entry
    auto factory = reinterpret_cast<frugal_plugin_factory_fn>(dlsym(handle, FRUGAL_FACTORY_SYMBOL));
    REQUIRE(factory);
    CHECK(factory(FRUGAL_ABI_VERSION + 1, index) == nullptr);  // refuses an ABI it does not speak
    CHECK(factory(FRUGAL_ABI_VERSION, 3) == nullptr);          // three plugins, then the end
    desc = factory(FRUGAL_ABI_VERSION, index);
    REQUIRE(desc);
    CHECK(desc->struct_size == sizeof(frugal_plugin_descriptor));
    CHECK(desc->get_extension == nullptr);
  }
  ~Loaded() {
    if (handle) dlclose(handle);
  }
  const frugal_planner_api* api() const { return static_cast<const frugal_planner_api*>(desc->api); }
};

json table() {
  std::vector<test::LayerSpec> l = {
      {"L1", {""}, 1, {1, 2}, {4, 3}},
      {"L2", {"L1"}, 1, {4, 8}, {4, 3}},
      {"L3", {"L2"}, 1, {1, 2}, {4, 3}},
  };
  return test::make_table_json(l, 1, 2);
}

}  // namespace

TEST_CASE("planner plugins: handshake and plans through the C ABI", "[planner]") {
  const std::string costs = table().dump();
  const char* names[] = {"vbs", "fbs", "greedy"};
  for (uint32_t i = 0; i < 3; ++i) {
    const char* name = names[i];
    INFO(name);
    Loaded p(i);
    CHECK(p.desc->kind == FRUGAL_KIND_PLANNER);
    CHECK(p.desc->abi_version == FRUGAL_ABI_VERSION);
    CHECK(std::string(p.desc->name) == name);
    REQUIRE(p.api()->struct_size >= sizeof(frugal_planner_api));

    frugal_blob out{};
    frugal_error err{};
    REQUIRE(p.api()->plan(costs.c_str(), R"({"budget_bytes": 7, "batch": 2, "unit_bytes": 1})", &out, &err) ==
            FRUGAL_OK);
    json plan = json::parse(std::string(static_cast<const char*>(out.data), out.size));
    REQUIRE(out.release);
    out.release(out.data);
    CHECK(plan["planner"] == name);
    json check = validate_plan(table(), plan);
    CHECK(check["peak_bytes"] == plan["peak_bytes"]);
    CHECK(check["time_per_sample_s"].get<double>() == Approx(std::string(name) == "fbs" ? 12.0 : 10.0));

    CHECK(p.api()->plan(costs.c_str(), R"({"budget_bytes": 6, "batch": 2})", &out, &err) ==
          FRUGAL_ERR_BUDGET);
    CHECK_THAT(err.message, Catch::StartsWith(name) && Catch::Contains("7 bytes"));
    CHECK(p.api()->plan("{]", R"({"budget_bytes": 6, "batch": 2})", &out, &err) ==
          FRUGAL_ERR_INVALID_ARGUMENT);
    CHECK_THAT(err.message, Catch::Contains("cost table: not valid JSON"));
    CHECK(p.api()->plan(costs.c_str(), "{]", &out, &err) == FRUGAL_ERR_INVALID_ARGUMENT);
    CHECK(p.api()->plan(nullptr, nullptr, &out, &err) == FRUGAL_ERR_INVALID_ARGUMENT);
  }
}
