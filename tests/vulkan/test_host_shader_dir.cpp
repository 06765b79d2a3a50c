// The host tells the vulkan executor where the shaders are: ExecutorClient adds
// "shader_dir" from loader/search_paths.h (FRUGAL_SHADER_DIR, else an installed
// share/frugal/shaders next to bin/frugal, else the build's shaders/) unless
// the caller gave one. Checked on the options themselves, through
// ExecutorClient with the plugin of this build, and end to end with a copy of
// the frugal executable in a fake install prefix whose plugin is NOT in that
// prefix (so only the host can know the prefix's shader folder).
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "frugal/error.h"
#include "loader/executor_client.h"
#include "loader/plugin_registry.h"
#include "loader/search_paths.h"
#include "tensor/tensor.h"
#include "vk_test_util.h"

namespace fs = std::filesystem;

namespace {

// Sets (or, with nullptr, unsets) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_ = old != nullptr;
    if (had_) old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (had_)
      setenv(name_.c_str(), old_.c_str(), 1);
    else
      unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_, old_;
  bool had_ = false;
};

// A fresh empty folder under the build tree, removed at the end of the scope.
struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& tag) {
    path = fs::path(FRUGAL_TEST_BINARY_DIR) / "test-tmp" / (tag + "-" + std::to_string(::getpid()));
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

const frugal::LoadedPlugin& vulkan_plugin() {
  static frugal::PluginRegistry registry;
  static const frugal::LoadedPlugin* p = [] {
    std::string why;
    const frugal::LoadedPlugin* q =
        registry.load_file(std::string(FRUGAL_TEST_BINARY_DIR) + "/plugins/vulkan.so", &why);
    INFO(why);
    REQUIRE(q != nullptr);
    return q;
  }();
  return *p;
}

// x [N, 5] -> Relu -> y.
frugal::Graph relu_model() {
  vk_test::GraphMaker m;
  m.input("x", {-1, 5});
  m.node("Relu", "relu", {"x"}, {"y"});
  m.output("y");
  return m.g;
}

std::string error_of_create(const nlohmann::json& options) {
  try {
    frugal::ExecutorClient ex(vulkan_plugin(), relu_model(), options);
  } catch (const frugal::Error& e) {
    return e.what();
  }
  return "";
}

// Runs a shell command, returns its exit status and output (stdout + stderr).
int run_command(const std::string& cmd, std::string& output) {
  FILE* f = ::popen((cmd + " 2>&1").c_str(), "r");
  REQUIRE(f != nullptr);
  char buf[4096];
  output.clear();
  for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) output.append(buf, n);
  const int status = ::pclose(f);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

TEST_CASE("the host adds its shader folder to executor options unless given one", "[vulkan][paths]") {
  TempDir dir("host-shaders");
  ScopedEnv env("FRUGAL_SHADER_DIR", dir.path.c_str());
  REQUIRE(frugal::shader_dir() == dir.path.string());
  CHECK(frugal::executor_options_with_host_paths(nullptr) ==
        nlohmann::json{{"shader_dir", dir.path.string()}});
  CHECK(frugal::executor_options_with_host_paths({{"threads", 2}}) ==
        nlohmann::json{{"threads", 2}, {"shader_dir", dir.path.string()}});
  const nlohmann::json mine = {{"shader_dir", "/mine"}, {"device", 0}};
  CHECK(frugal::executor_options_with_host_paths(mine) == mine);
  // Not an object: left for the plugin to refuse with its own message.
  CHECK(frugal::executor_options_with_host_paths(nlohmann::json::array({1})) == nlohmann::json::array({1}));
}

TEST_CASE("an executor created by the host reads the host's shader folder", "[vulkan][paths]") {
  VK_REQUIRE_DEVICE();
  const std::string shaders = FRUGAL_SHADER_DIR_FOR_TESTS;
  TempDir empty("empty-shaders");

  SECTION("an empty folder from FRUGAL_SHADER_DIR: a clear error naming the missing file") {
    ScopedEnv env("FRUGAL_SHADER_DIR", empty.path.c_str());
    const std::string msg = error_of_create(nullptr);
    INFO(msg);
    CHECK(msg.find("vulkan") != std::string::npos);
    CHECK(msg.find("shader " + empty.path.string() + "/") != std::string::npos);
    CHECK(msg.find(".spv not found") != std::string::npos);
  }
  SECTION("the caller's shader_dir wins over the host's") {
    ScopedEnv env("FRUGAL_SHADER_DIR", shaders.c_str());
    const std::string msg = error_of_create({{"shader_dir", empty.path.string()}});
    INFO(msg);
    CHECK(msg.find("shader " + empty.path.string() + "/") != std::string::npos);
  }
  SECTION("the host's folder works: the executor reports it and runs") {
    ScopedEnv env("FRUGAL_SHADER_DIR", shaders.c_str());
    frugal::ExecutorClient ex(vulkan_plugin(), relu_model());
    CHECK(ex.describe()["vulkan"]["shader_dir"] == shaders);
    frugal::Tensor x({2, 5});
    for (size_t i = 0; i < x.data.size(); ++i) x.data[i] = float(i) - 4.5f;
    std::vector<frugal::Tensor> out;
    ex.run(nullptr, {x}, out);
    REQUIRE(out.size() == 1);
    REQUIRE(out[0].data.size() == x.data.size());
    for (size_t i = 0; i < x.data.size(); ++i) CHECK(out[0].data[i] == std::max(x.data[i], 0.0f));
  }
}

TEST_CASE("an installed frugal passes its share/frugal/shaders to a plugin loaded from elsewhere",
          "[vulkan][paths]") {
  VK_REQUIRE_DEVICE();
  // <prefix>/bin/frugal (a copy: /proc/self/exe resolves links) and an EMPTY
  // <prefix>/share/frugal/shaders; the prefix has no lib/frugal/plugins, so the
  // plugin comes from this build's plugin folder, where it finds no install of
  // its own (its fallback would be the build's shaders/).
  TempDir prefix("fake-install");
  fs::create_directories(prefix.path / "bin");
  fs::copy_file(fs::path(FRUGAL_TEST_BINARY_DIR) / "frugal", prefix.path / "bin" / "frugal");
  const fs::path installed = prefix.path / "share" / "frugal" / "shaders";
  fs::create_directories(installed);
  std::ofstream(prefix.path / "probe.lua")
      << "local ex = frugal.executor(frugal.zoo('toy_tiny'), {executor = 'vulkan'})\n"
         "print('shader_dir=' .. ex:describe().vulkan.shader_dir)\n";
  const std::string cmd = "env -u FRUGAL_SHADER_DIR FRUGAL_SCRIPT_DIR='" + std::string(FRUGAL_SOURCE_DIR) +
                          "/scripts' FRUGAL_PLUGIN_PATH= '" + (prefix.path / "bin" / "frugal").string() +
                          "' '" + (prefix.path / "probe.lua").string() + "'";
  std::string output;
  {
    INFO(cmd);
    const int rc = run_command(cmd, output);
    INFO(output);
    CHECK(rc != 0);
    CHECK(output.find("shader " + installed.string() + "/") != std::string::npos);
    CHECK(output.find("not found") != std::string::npos);
  }
  for (const auto& e : fs::directory_iterator(FRUGAL_SHADER_DIR_FOR_TESTS))
    if (e.path().extension() == ".spv") fs::copy_file(e.path(), installed / e.path().filename());
  {
    INFO(cmd);
    const int rc = run_command(cmd, output);
    INFO(output);
    CHECK(rc == 0);
    CHECK(output.find("shader_dir=" + installed.string()) != std::string::npos);
  }
}
