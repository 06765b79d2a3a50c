// When may a Vulkan test skip? Only on a machine without Vulkan (no loader,
// driver or device), and never where Vulkan is required (FRUGAL_REQUIRE_VULKAN,
// as in CI). A missing validation layer or a stale shader folder must fail the
// tests, not turn them green. Checked on the decision itself and on a real
// Vulkan test executable (test_vulkan_kernels) run in broken environments.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "vk_test_util.h"

namespace fs = std::filesystem;
using vk_test::Verdict;
using vk_test::verdict_for_create;

namespace {

struct ChildRun {
  int code = -1;
  std::string output;
};

// One case of test_vulkan_kernels (GlobalMaxPool: a pooling shader after the
// probe's pointwise one) with `env` prepended to the ctest environment.
ChildRun run_kernels_test(const std::string& env) {
  const std::string cmd =
      env + " " FRUGAL_TEST_BINARY_DIR
            "/tests/vulkan/test_vulkan_kernels -r compact 'GlobalMaxPool equals the maximum of each "
            "plane' 2>&1";
  ChildRun r;
  FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) r.output.append(buf, n);
  const int status = pclose(p);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// A scratch folder under the build tree, emptied.
fs::path scratch(const std::string& name) {
  const fs::path dir = fs::path(FRUGAL_TEST_BINARY_DIR) / "test-scratch" / name;
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// The child must fail (Catch's failed-test count) and say why; never skip.
void check_fails(const ChildRun& r, const std::string& why) {
  INFO(r.output);
  CHECK(r.code != 0);
  CHECK(r.code != frugal_test::kSkipExitCode);
  CHECK(r.code < 128);  // a failed test, not a crash
  CHECK(has(r.output, why));
  CHECK(!has(r.output, "SKIPPED"));
}

}  // namespace

TEST_CASE("only a machine without Vulkan skips, and only where Vulkan is not required", "[vulkan][skip]") {
  const std::string no_driver =
      "no Vulkan driver: the loader (libvulkan.so.1) found no usable driver (VK_ERROR_INCOMPATIBLE_DRIVER)";
  CHECK(verdict_for_create(FRUGAL_OK, "", false) == Verdict::Run);
  CHECK(verdict_for_create(FRUGAL_ERR_DEVICE, no_driver, false) == Verdict::Skip);
  CHECK(verdict_for_create(FRUGAL_ERR_DEVICE, "no Vulkan loader: cannot open libvulkan.so.1", false) ==
        Verdict::Skip);
  CHECK(verdict_for_create(FRUGAL_ERR_DEVICE, "no Vulkan device: the loader lists no physical device",
                           false) == Verdict::Skip);
  CHECK(verdict_for_create(FRUGAL_ERR_DEVICE, no_driver, true) == Verdict::Fail);
  CHECK(verdict_for_create(FRUGAL_ERR_DEVICE,
                           "FRUGAL_VULKAN_VALIDATION is set but the layer VK_LAYER_KHRONOS_validation is "
                           "not installed",
                           false) == Verdict::Fail);
  CHECK(verdict_for_create(FRUGAL_ERR_DEVICE, "shader /x/pointwise.spv not found", false) == Verdict::Fail);
  CHECK(verdict_for_create(FRUGAL_ERR_DEVICE, "shader /x/pointwise.spv is not SPIR-V (bad magic number)",
                           false) == Verdict::Fail);
  CHECK(verdict_for_create(FRUGAL_ERR_UNSUPPORTED, "no Vulkan device", false) == Verdict::Fail);
}

TEST_CASE("without a driver the tests skip visibly, or fail where Vulkan is required", "[vulkan][skip]") {
  const std::string no_icd = "VK_ICD_FILENAMES=" FRUGAL_TEST_BINARY_DIR
                             "/no-such-icd.json VK_DRIVER_FILES=" FRUGAL_TEST_BINARY_DIR "/no-such-icd.json";
  const ChildRun skipped = run_kernels_test(no_icd + " FRUGAL_REQUIRE_VULKAN=0");
  INFO(skipped.output);
  CHECK(skipped.code == frugal_test::kSkipExitCode);  // ctest: "Skipped", not "Passed"
  CHECK(has(skipped.output, "SKIPPED: no Vulkan driver or device (no Vulkan "));
  check_fails(run_kernels_test(no_icd + " FRUGAL_REQUIRE_VULKAN=1"), "FRUGAL_REQUIRE_VULKAN is set: no skip");
}

TEST_CASE("a missing validation layer or a stale shader folder fails the tests", "[vulkan][skip]") {
  VK_REQUIRE_DEVICE();  // the broken environments below are broken only where Vulkan works
  // Whatever ctest says about requiring Vulkan: these must fail even where skips are allowed.
  const std::string allowed = "FRUGAL_REQUIRE_VULKAN=0 FRUGAL_VULKAN_VALIDATION=1";
  SECTION("no validation layer") {
    const fs::path empty = scratch("no-layers");
    check_fails(run_kernels_test(allowed + " VK_LAYER_PATH=" + empty.string()),
                "VK_LAYER_KHRONOS_validation is not installed");
  }
  SECTION("an empty shader folder") {
    const fs::path empty = scratch("no-shaders");
    check_fails(run_kernels_test(allowed + " FRUGAL_SHADER_DIR=" + empty.string()),
                "pointwise.spv not found");
  }
  SECTION("a folder from an older build: the pooling shader missing") {
    const fs::path stale = scratch("stale-shaders");
    for (const auto& e : fs::directory_iterator(FRUGAL_SHADER_DIR_FOR_TESTS))
      if (e.path().extension() == ".spv" && e.path().filename().string().rfind("pool_", 0) != 0)
        fs::copy_file(e.path(), stale / e.path().filename());
    check_fails(run_kernels_test(allowed + " FRUGAL_SHADER_DIR=" + stale.string()), "failed");
  }
  SECTION("a corrupt shader") {
    const fs::path bad = scratch("corrupt-shaders");
    for (const auto& e : fs::directory_iterator(FRUGAL_SHADER_DIR_FOR_TESTS))
      if (e.path().extension() == ".spv") fs::copy_file(e.path(), bad / e.path().filename());
    std::ofstream(bad / "pointwise.spv", std::ios::binary | std::ios::trunc) << "not SPIR-V, just text....";
    check_fails(run_kernels_test(allowed + " FRUGAL_SHADER_DIR=" + bad.string()), "is not SPIR-V");
  }
}
