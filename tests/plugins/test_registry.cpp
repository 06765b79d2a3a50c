// The loader against a folder of broken plugins: each is refused with a reason
// naming its file and its specific fault, the good ones load, and the registry
// keeps working afterwards.
#include <catch2/catch.hpp>
#include <map>
#include <set>

#include "fixture_paths.h"
#include "frugal/error.h"
#include "frugal/plugin.h"
#include "loader/planner_client.h"
#include "loader/plugin_registry.h"

using namespace frugal;
using fixture_paths::in_scan;

namespace {

const PluginRefusal* refusal_of(const PluginRegistry& r, const std::string& file) {
  for (const auto& x : r.refused())
    if (x.file == file) return &x;
  return nullptr;
}

// Plan steps of the fixture "fixed" planner, computed here independently.
nlohmann::json expected_fixed_steps(const std::vector<std::string>& layers, int batch, int chunk) {
  nlohmann::json steps = nlohmann::json::array();
  int first = 0;
  while (first < batch) {
    const int count = std::min(chunk, batch - first);
    for (const auto& l : layers) steps.push_back({{"layer", l}, {"first", first}, {"count", count}});
    first += count;
  }
  return steps;
}

nlohmann::json three_layer_costs() {
  return {{"layers",
           {{{"name", "conv1"}, {"time_s", {4.0, 3.0, 2.5}}},
            {{"name", "conv2"}, {"time_s", {4.0, 3.0, 2.0}}},
            {{"name", "fc"}, {"time_s", {1.0, 0.5, 0.25}}}}}};
}

}  // namespace

TEST_CASE("every broken plugin is refused with its file and its specific cause", "[plugins][unit]") {
  PluginRegistry& r = fixture_paths::scanned_registry();
  const std::string fixed = in_scan("fixed_planner.so");
  const std::map<std::string, std::string> expected = {
      {"text.so", "not a loadable shared object: "},
      {"no_entry.so", "no symbol frugal_plugin_entry"},
      {"null_descriptor.so", "frugal_plugin_entry returned NULL: the plugin does not serve ABI 1"},
      {"small_descriptor.so",
       "descriptor is 8 bytes, host expects at least " + std::to_string(FRUGAL_DESCRIPTOR_BASE_SIZE)},
      {"wrong_abi.so", "built for ABI 7, host speaks 1"},
      {"unknown_kind.so", "unknown kind 9"},
      {"no_name.so", "descriptor has no name"},
      {"null_api.so", "planner api table is NULL"},
      {"small_api.so", "planner api table is " + std::to_string(sizeof(size_t)) +
                           " bytes, host needs at least " + std::to_string(sizeof(frugal_planner_api))},
      {"null_function.so", "executor api: function 'describe' is NULL"},
      {"zz_duplicate_planner.so", "duplicate planner plugin 'fixed': already loaded from " + fixed},
  };
  for (const auto& [file, cause] : expected) {
    INFO(file);
    const PluginRefusal* x = refusal_of(r, in_scan(file));
    REQUIRE(x != nullptr);
    CHECK(x->reason.rfind(in_scan(file) + ": ", 0) == 0);  // the reason starts with the file
    CHECK_THAT(x->reason, Catch::Contains(cause));
  }
  // Nothing else was refused: files not ending in .so, and folders, are skipped.
  CHECK(r.refused().size() == expected.size());
}

TEST_CASE("the good plugins in the same folder load with their descriptors", "[plugins][unit]") {
  PluginRegistry& r = fixture_paths::scanned_registry();
  std::set<std::pair<std::string, std::string>> loaded;
  for (const auto& p : r.plugins()) loaded.insert({kind_name(p.kind), p.name});
  const std::set<std::pair<std::string, std::string>>
      expected = {{"planner", "fixed"},    {"planner", "failing"},   {"planner", "empty"},
                  {"planner", "garbage"},  {"planner", "no_data"},   {"executor", "doubler"},
                  {"executor", "failing"},  // same name, other kind: not a duplicate
                  {"folder", "identity"},  {"predictor", "constant"}};
  CHECK(loaded == expected);

  const LoadedPlugin* fixed = r.find(FRUGAL_KIND_PLANNER, "fixed");
  REQUIRE(fixed != nullptr);
  CHECK(fixed->file == in_scan("fixed_planner.so"));  // the first found, not the duplicate
  CHECK(fixed->version == "1.0");
  CHECK(fixed->description == "test planner");
  CHECK(fixed->handle != nullptr);
  CHECK(r.find(FRUGAL_KIND_EXECUTOR, "fixed") == nullptr);
  CHECK(r.find(FRUGAL_KIND_PLANNER, "absent") == nullptr);
}

TEST_CASE("after all the refusals the good plugin's call works", "[plugins][unit]") {
  PluginRegistry& r = fixture_paths::scanned_registry();
  const LoadedPlugin& fixed = r.require(FRUGAL_KIND_PLANNER, "fixed");
  const auto plan = make_plan(fixed, three_layer_costs(), {{"batch", 5}, {"chunk", 2}});
  CHECK(plan["planner"] == "fixed");
  CHECK(plan["steps"] == expected_fixed_steps({"conv1", "conv2", "fc"}, 5, 2));
  CHECK(fixture_paths::call_counter(fixed, "fixture_live_blobs") == 0);  // the plan blob was released
}

TEST_CASE("load_file reports why a file is refused and reuses loaded files", "[plugins][unit]") {
  PluginRegistry r;
  std::string why;
  CHECK(r.load_file(in_scan("wrong_abi.so"), &why) == nullptr);
  CHECK(why == in_scan("wrong_abi.so") + ": built for ABI 7, host speaks 1");

  CHECK(r.load_file(in_scan("does_not_exist.so"), &why) == nullptr);
  CHECK(why == in_scan("does_not_exist.so") + ": no such file");

  const LoadedPlugin* a = r.load_file(in_scan("fixed_planner.so"), &why);
  REQUIRE(a != nullptr);
  CHECK(why.empty());
  // The same file by another spelling of its path is the same plugin, not a duplicate.
  const LoadedPlugin* b = r.load_file(fixture_paths::scan_dir() + "/./fixed_planner.so", &why);
  CHECK(b == a);
  CHECK(r.plugins().size() == 1);
  CHECK(r.refused().size() == 2);
}

TEST_CASE("scanning again adds nothing and repeats no refusal", "[plugins][unit]") {
  PluginRegistry r;
  r.scan_dirs({fixture_paths::scan_dir()});
  const size_t n_loaded = r.plugins().size(), n_refused = r.refused().size();
  const LoadedPlugin* before = r.find(FRUGAL_KIND_PLANNER, "fixed");
  r.scan_dirs({fixture_paths::scan_dir()});
  CHECK(r.plugins().size() == n_loaded);
  CHECK(r.refused().size() == n_refused);
  CHECK(r.find(FRUGAL_KIND_PLANNER, "fixed") == before);  // addresses stay valid
}

TEST_CASE("require names what was asked for and lists what is there", "[plugins][unit]") {
  PluginRegistry& r = fixture_paths::scanned_registry();
  try {
    r.require(FRUGAL_KIND_PLANNER, "vbs_typo");
    FAIL("require did not throw");
  } catch (const Error& e) {
    const std::string m = e.what();
    CHECK_THAT(m, Catch::Contains("no planner plugin named 'vbs_typo'"));
    CHECK_THAT(m, Catch::Contains("fixed (" + in_scan("fixed_planner.so") + ")"));
    CHECK_THAT(m, Catch::Contains(fixture_paths::scan_dir()));
    CHECK_THAT(m, Catch::Contains("refused"));
  }
  PluginRegistry empty;
  CHECK_THROWS_WITH(empty.require(FRUGAL_KIND_FOLDER, "banoff"),
                    Catch::Contains("no folder plugin named 'banoff'; no folder plugins are loaded"));
}

TEST_CASE("the in-tree build of the example plugin loads and plans", "[plugins][unit]") {
  PluginRegistry r;
  std::string why;
  const LoadedPlugin* p = r.load_file(FRUGAL_EXAMPLE_PLUGIN, &why);
  INFO(why);
  REQUIRE(p != nullptr);
  CHECK(p->name == "halfbatch");
  CHECK(kind_name(p->kind) == "planner");
  const auto costs = three_layer_costs();
  const auto plan = make_plan(*p, costs, {{"batch", 3}, {"budget_bytes", 1000}});
  CHECK(plan["steps"] == expected_fixed_steps({"conv1", "conv2", "fc"}, 3, 2));
  // Time per sample from the table: halves of 2 and 1 samples.
  const double total = 2 * (3.0 + 3.0 + 0.5) + 1 * (4.0 + 4.0 + 1.0);
  CHECK(plan["time_per_sample_s"].get<double>() == Approx(total / 3));
  CHECK(plan["budget_bytes"] == 1000);
  CHECK_THROWS_WITH(make_plan(*p, costs, {{"batch", 7}}),
                    Catch::Contains("halfbatch (") && Catch::Contains("no time_s entry for batch 4"));
}

TEST_CASE("kind names round-trip", "[plugins][unit]") {
  for (int k : {FRUGAL_KIND_FOLDER, FRUGAL_KIND_PREDICTOR, FRUGAL_KIND_PLANNER, FRUGAL_KIND_EXECUTOR}) {
    CHECK(kind_from_name(kind_name(k)) == k);
    CHECK(kind_from_name(kind_name(k) + "s") == k);
  }
  CHECK(kind_name(9) == "unknown");
  CHECK(kind_from_name("planers") == 0);
}

TEST_CASE("a factory puts several plugins in one file; a bad one among them is refused alone",
          "[plugins][unit]") {
  PluginRegistry r;
  const std::string file = fixture_paths::dir("factory") + "/pair_planners.so";
  std::string why;
  const LoadedPlugin* first = r.load_file(file, &why);
  INFO(why);
  REQUIRE(first != nullptr);
  CHECK(first->name == "pair_a");
  const LoadedPlugin* b = r.find(FRUGAL_KIND_PLANNER, "pair_b");
  REQUIRE(b != nullptr);
  CHECK(b->file == file);
  CHECK(b->handle == first->handle);
  CHECK(r.find(FRUGAL_KIND_PLANNER, "pair_c") == nullptr);
  REQUIRE(r.refused().size() == 1);
  CHECK(r.refused()[0].reason == file + ": planner api table is NULL");
  CHECK(r.plugins().size() == 2);
  CHECK(r.load_file(file, &why) == first);  // loading the file again adds nothing
  CHECK(r.plugins().size() == 2);
}

TEST_CASE("a descriptor from before get_extension was appended still loads, without extensions",
          "[plugins][unit]") {
  PluginRegistry r;
  std::string why;
  const LoadedPlugin* p = r.load_file(fixture_paths::dir("factory") + "/old_descriptor.so", &why);
  INFO(why);
  REQUIRE(p != nullptr);
  CHECK(p->name == "old_descriptor");
  CHECK(p->get_extension == nullptr);  // the field past struct_size is never read
  CHECK(p->extension(FRUGAL_EXT_DEVICES, sizeof(frugal_devices_extension)) == nullptr);
}
