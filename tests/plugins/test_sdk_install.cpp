// The SDK as an out-of-tree plugin author gets it: install the "sdk" component of
// this build into a scratch prefix, build examples/plugin against it with a
// separate CMake project, load the result and plan with it; the same for
// examples/folder_plugin, which uses the installed model library. Also checks
// that the installed plugin.h is plain C and that the pkg-config file points at it.
#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>

#include "frugal/model/graph.h"
#include "loader/folder_client.h"
#include "loader/planner_client.h"
#include "loader/plugin_registry.h"

namespace fs = std::filesystem;

namespace {

const std::string kWork = FRUGAL_SDK_INSTALL_WORKDIR;
const std::string kCMake = FRUGAL_CMAKE_COMMAND;

int sh(const std::string& command) {
  INFO(command);
  return std::system((command + " > " + kWork + "/last_command.log 2>&1").c_str());
}

// Installs this build's "sdk" component into prefix.
void install_sdk(const std::string& prefix) {
  REQUIRE(sh(kCMake + " --install " + FRUGAL_TEST_BINARY_DIR + " --component sdk --prefix " + prefix) == 0);
}

// Configures and builds examples/<example> as its own project against the SDK in prefix.
void build_example(const std::string& example, const std::string& build, const std::string& prefix) {
  REQUIRE(sh(kCMake + " -S " + FRUGAL_SOURCE_DIR + "/examples/" + example + " -B " + build +
             " -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH=" + prefix) == 0);
  REQUIRE(sh(kCMake + " --build " + build) == 0);
}

}  // namespace

TEST_CASE("an out-of-tree plugin builds against the installed SDK and loads", "[plugins][slow]") {
  fs::remove_all(kWork);
  fs::create_directories(kWork);
  const std::string prefix = kWork + "/prefix", build = kWork + "/build";
  install_sdk(prefix);
  CHECK(fs::exists(prefix + "/include/frugal/plugin.h"));
  CHECK(fs::exists(prefix + "/include/frugal/plugin_sdk.hpp"));
  CHECK(fs::exists(prefix + "/lib/cmake/frugal/frugalConfig.cmake"));

  // plugin.h is the C ABI: it must compile as C99, via the pkg-config flags.
  {
    std::FILE* f = std::fopen((kWork + "/abi.c").c_str(), "w");
    REQUIRE(f != nullptr);
    std::fputs("#include <frugal/plugin.h>\nint main(void) { return FRUGAL_ABI_VERSION == 1u ? 0 : 1; }\n",
               f);
    std::fclose(f);
    CHECK(sh("cc -std=c99 -Wall -Wextra -Werror -pedantic $(PKG_CONFIG_PATH=" + prefix +
             "/share/pkgconfig pkg-config --cflags frugal-sdk) " + kWork + "/abi.c -o " + kWork + "/abi && " +
             kWork + "/abi") == 0);
  }

  build_example("plugin", build, prefix);

  frugal::PluginRegistry r;
  std::string why;
  const frugal::LoadedPlugin* p = r.load_file(build + "/halfbatch.so", &why);
  INFO(why);
  REQUIRE(p != nullptr);
  CHECK(p->name == "halfbatch");
  const nlohmann::json costs = {{"layers", {{{"name", "l1"}, {"time_s", {2.0, 1.5}}}}}};
  const auto plan = frugal::make_plan(*p, costs, {{"batch", 4}});
  const nlohmann::json steps = {{{"layer", "l1"}, {"first", 0}, {"count", 2}},
                                {{"layer", "l1"}, {"first", 2}, {"count", 2}}};
  CHECK(plan["steps"] == steps);
  CHECK(plan["time_per_sample_s"].get<double>() == Approx(1.5));

  // With memory in the table, the example fills peak_bytes with the installed plan
  // checker: all 4 input samples (40) + the first step's output (8) and workspace (2).
  nlohmann::json with_bytes = costs;
  with_bytes["batch_max"] = 2;
  auto& l1 = with_bytes["layers"][0];
  l1["inputs"] = {""};
  l1["in_bytes"] = {10, 20};
  l1["out_bytes"] = {4, 8};
  l1["ws_bytes"] = {1, 2};
  const auto planned = frugal::make_plan(*p, with_bytes, {{"batch", 4}});
  CHECK(planned["peak_bytes"] == 50);
}

// X -> Relu -> Dropout -> Identity -> Sigmoid -> Y, plus an Identity that is the output.
static frugal::Graph noop_chain() {
  frugal::Graph g;
  auto value = [&](const std::string& name) {
    frugal::TensorDesc d;
    d.name = name;
    d.dtype = frugal::DType::Float32;
    g.tensors[name] = d;
  };
  for (const char* v : {"x", "r", "d", "i", "s", "y"}) value(v);
  g.tensors["x"].has_shape = true;
  g.tensors["x"].shape = frugal::make_shape({1, 4});
  g.inputs = {"x"};
  g.outputs = {"y"};
  auto node = [&](const std::string& name, const std::string& op, const std::string& in,
                  const std::string& out) {
    frugal::Node n;
    n.name = name;
    n.op_type = op;
    n.inputs = {in};
    n.outputs = {out};
    g.nodes.push_back(n);
  };
  node("relu", "Relu", "x", "r");
  node("drop", "Dropout", "r", "d");
  node("ident", "Identity", "d", "i");
  node("sig", "Sigmoid", "i", "s");
  node("out", "Identity", "s", "y");  // writes the graph output: kept
  return g;
}

TEST_CASE("an out-of-tree folder builds against the installed model library and folds", "[plugins][slow]") {
  const std::string prefix = kWork + "/prefix_folder", build = kWork + "/build_folder";
  fs::remove_all(prefix);
  fs::remove_all(build);
  fs::create_directories(kWork);
  install_sdk(prefix);
  CHECK(fs::exists(prefix + "/include/frugal/model/graph.h"));
  build_example("folder_plugin", build, prefix);

  frugal::PluginRegistry r;
  std::string why;
  const frugal::LoadedPlugin* p = r.load_file(build + "/drop_noops.so", &why);
  INFO(why);
  REQUIRE(p != nullptr);
  CHECK(p->kind == FRUGAL_KIND_FOLDER);
  const frugal::FoldedModel f = frugal::fold_model(*p, noop_chain(), nlohmann::json::object());
  std::vector<std::string> ops, sig_inputs;
  for (const frugal::Node& n : f.graph.nodes) {
    ops.push_back(n.op_type);
    if (n.name == "sig") sig_inputs = n.inputs;
  }
  CHECK(ops == std::vector<std::string>{"Relu", "Sigmoid", "Identity"});
  CHECK(sig_inputs == std::vector<std::string>{"r"});
  CHECK(f.graph.outputs == std::vector<std::string>{"y"});
  CHECK(f.report["removed"] == nlohmann::json::array({"drop", "ident"}));
}
