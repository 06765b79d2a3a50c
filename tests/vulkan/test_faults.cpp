// The vulkan executor when the device cannot do what is asked or stops
// working: a budget larger than the device can allocate (refused, nothing
// changed), and a device lost or hung during a run (the test hook
// FRUGAL_VULKAN_FAULT, since lavapipe cannot lose its device on demand): a
// clear FRUGAL_ERR_DEVICE, no hang, the arena freed, later calls refused, and a
// new executor working. Through the plugin's C table, like a host.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <string>

#include "vk_test_util.h"

using vk_test::GraphMaker;
using vk_test::host_inputs;
using vk_test::HostTensor;
using vk_test::max_diff;

namespace {

// x [N,3,8,8] -> conv(4)+Relu -> flatten -> gemm(5).
frugal::Graph small_model() {
  GraphMaker m;
  m.input("x", {-1, 3, 8, 8});
  m.node("Conv", "conv", {"x", m.weight("w", {4, 3, 3, 3}, -0.3f, 0.3f), m.weight("b", {4})}, {"c"})
      .set_attr_ints("pads", {1, 1, 1, 1});
  m.node("Relu", "relu", {"c"}, {"r"});
  m.node("Flatten", "flat", {"r"}, {"f"});
  m.node("Gemm", "fc", {"f", m.weight("wf", {5, 256}, -0.1f, 0.1f), m.weight("bf", {5})}, {"y"})
      .set_attr_int("transB", 1);
  m.output("y");
  return m.g;
}

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// Sets FRUGAL_VULKAN_FAULT for one scope.
struct FaultScope {
  explicit FaultScope(const char* fault) { setenv("FRUGAL_VULKAN_FAULT", fault, 1); }
  ~FaultScope() { unsetenv("FRUGAL_VULKAN_FAULT"); }
};

// The largest device-local heap describe() reports (the largest heap when none is).
uint64_t largest_heap(const nlohmann::json& description) {
  uint64_t local = 0, any = 0;
  for (const auto& h : description["vulkan"]["physical_device"]["heaps"]) {
    any = std::max(any, h["size"].get<uint64_t>());
    if (h["device_local"].get<bool>()) local = std::max(local, h["size"].get<uint64_t>());
  }
  return local ? local : any;
}

}  // namespace

TEST_CASE("a budget larger than the device can allocate is refused and changes nothing", "[vulkan][faults]") {
  VK_REQUIRE_DEVICE();
  const frugal::Graph g = small_model();
  const auto in = vk_test::random_inputs(g, 3, 7);
  const frugal::RefTensor want = frugal::reference_run(g, in).at("y");
  vk_test::Executor ex(g);
  REQUIRE(ex.ok());
  const nlohmann::json d = ex.describe();
  const uint64_t heap = largest_heap(d);
  REQUIRE(heap > 0);
  const std::string device = d["vulkan"]["physical_device"]["name"];

  // A sane budget first: refusals must leave it in place.
  const uint64_t budget = 1u << 20;
  REQUIRE(ex.set_budget(budget).ok());
  CHECK(ex.describe()["vulkan"]["arena_bytes"] == budget);

  for (const uint64_t bytes : {2 * heap, uint64_t(1) << 63, ~uint64_t(0)}) {
    INFO("budget " << bytes);
    const vk_test::Status st = ex.set_budget(bytes);
    INFO(st.message);
    CHECK(st.code == FRUGAL_ERR_OUT_OF_MEMORY);  // the cpu executor's code for more than the machine has
    CHECK(has(st.message, "set_budget: "));
    CHECK(has(st.message, "(" + std::to_string(bytes) + " bytes)"));  // the budget asked for
    CHECK(has(st.message, device));
    CHECK(has(st.message, "largest device-local memory heap is"));
    CHECK(has(st.message, "(" + std::to_string(heap) + " bytes)"));  // what the device offers
    CHECK(has(st.message, "the budget is unchanged"));
    CHECK(ex.describe()["vulkan"]["arena_bytes"] == budget);
  }

  // Within the heap but above maxMemoryAllocationSize (where the device has
  // such a gap): refused too, naming the limit, as the arena is one buffer.
  const uint64_t max_alloc =
      d["vulkan"]["physical_device"]["limits"]["max_memory_allocation_size"].get<uint64_t>();
  if (max_alloc > 0 && max_alloc < heap) {
    const vk_test::Status st = ex.set_budget(max_alloc + 1);
    INFO(st.message);
    CHECK(st.code == FRUGAL_ERR_OUT_OF_MEMORY);
    CHECK(has(st.message, "maxMemoryAllocationSize"));
    CHECK(has(st.message, "(" + std::to_string(max_alloc) + " bytes)"));
    CHECK(has(st.message, "the budget is unchanged"));
  }

  // Still usable: runs in the budget set before the refusals, then in a new one.
  std::vector<HostTensor> out;
  nlohmann::json report;
  REQUIRE(ex.run(host_inputs(in), out, nullptr, &report).ok());
  CHECK(report["auto_budget"] == false);
  CHECK(report["arena_bytes"] == budget);
  CHECK(max_diff(out[0].data, want) < 1e-4);
  REQUIRE(ex.set_budget(budget / 2).ok());
  out.clear();
  REQUIRE(ex.run(host_inputs(in), out, nullptr, &report).ok());
  CHECK(report["arena_bytes"] == budget / 2);
  CHECK(max_diff(out[0].data, want) < 1e-4);
  CHECK(ex.validation_errors() == 0);
}

TEST_CASE("a device lost mid-run fails the run, frees the arena, and refuses later calls",
          "[vulkan][faults]") {
  VK_REQUIRE_DEVICE();
  const frugal::Graph g = small_model();
  const auto in = vk_test::random_inputs(g, 2, 9);
  const frugal::RefTensor want = frugal::reference_run(g, in).at("y");
  const uint64_t budget = 1u << 20;
  {
    vk_test::Executor ex(g);
    REQUIRE(ex.ok());
    REQUIRE(ex.set_budget(budget).ok());
    std::vector<HostTensor> out;
    REQUIRE(ex.run(host_inputs(in), out).ok());  // a healthy run first: the recording exists
    {
      FaultScope fault("device_lost");
      out.clear();
      const vk_test::Status st = ex.run(host_inputs(in), out);
      INFO(st.message);
      CHECK(st.code == FRUGAL_ERR_DEVICE);
      CHECK(has(st.message, "run: the Vulkan device "));
      CHECK(has(st.message, "was lost (VK_ERROR_DEVICE_LOST)"));
      CHECK(has(st.message, "the arena (1.0 MB (1048576 bytes)) was freed"));
      CHECK(has(st.message, "create a new one"));
    }
    const nlohmann::json d = ex.describe();  // describe needs no device work: still answers
    CHECK(d["vulkan"]["arena_bytes"] == 0);
    CHECK(has(d["vulkan"]["device_failure"].get<std::string>(), "VK_ERROR_DEVICE_LOST"));
    CHECK(d["vulkan"]["validation_errors"] == 0);

    out.clear();
    const vk_test::Status again = ex.run(host_inputs(in), out);  // no fault asked now: still refused
    INFO(again.message);
    CHECK(again.code == FRUGAL_ERR_DEVICE);
    CHECK(has(again.message, "run: refused, the device failed earlier"));
    CHECK(has(again.message, "VK_ERROR_DEVICE_LOST"));
    const vk_test::Status budget_again = ex.set_budget(budget);
    CHECK(budget_again.code == FRUGAL_ERR_DEVICE);
    CHECK(has(budget_again.message, "set_budget: refused"));
    double median = 0, spread = 0;
    const vk_test::Status timed = ex.time_layer(0, 1, 1, median, spread);
    CHECK(timed.code == FRUGAL_ERR_DEVICE);
    CHECK(has(timed.message, "time_layer: refused"));

    // A new executor, while the old one still holds the lost device, gets a new device and works.
    vk_test::Executor fresh(g);
    REQUIRE(fresh.ok());
    CHECK(fresh.describe()["vulkan"]["device_failure"] == "");
    out.clear();
    REQUIRE(fresh.run(host_inputs(in), out).ok());
    CHECK(max_diff(out[0].data, want) < 1e-4);
    CHECK(fresh.validation_errors() == 0);
  }  // destroying the executor of a lost device neither crashes nor hangs

  vk_test::Executor later(g);
  REQUIRE(later.ok());
  std::vector<HostTensor> out;
  REQUIRE(later.run(host_inputs(in), out).ok());
  CHECK(max_diff(out[0].data, want) < 1e-4);
  CHECK(later.validation_errors() == 0);
}

TEST_CASE("a submission that outlasts timeout_s fails the run instead of hanging", "[vulkan][faults]") {
  VK_REQUIRE_DEVICE();
  const frugal::Graph g = small_model();
  const auto in = vk_test::random_inputs(g, 2, 11);
  {
    vk_test::Executor bad(g, "{\"timeout_s\": 0}");
    CHECK(bad.created.code == FRUGAL_ERR_INVALID_ARGUMENT);
    CHECK(has(bad.created.message, "'timeout_s'"));
  }
  vk_test::Executor ex(g, "{\"timeout_s\": 2.5}");
  REQUIRE(ex.ok());
  CHECK(ex.describe()["vulkan"]["timeout_s"] == 2.5);
  std::vector<HostTensor> out;
  {
    FaultScope fault("sometimes");
    const vk_test::Status st = ex.run(host_inputs(in), out);
    CHECK(st.code == FRUGAL_ERR_INVALID_ARGUMENT);
    CHECK(has(st.message, "FRUGAL_VULKAN_FAULT"));
    CHECK(has(st.message, "\"sometimes\""));
  }
  {
    FaultScope fault("timeout");
    out.clear();
    const vk_test::Status st = ex.run(host_inputs(in), out);  // no budget: a temporary arena of the peak
    INFO(st.message);
    CHECK(st.code == FRUGAL_ERR_DEVICE);
    CHECK(has(st.message, "did not finish a submission within 2.5 s (option \"timeout_s\")"));
    CHECK(has(st.message, "stays allocated until this executor is destroyed"));
  }
  out.clear();
  const vk_test::Status again = ex.run(host_inputs(in), out);
  CHECK(again.code == FRUGAL_ERR_DEVICE);
  CHECK(has(again.message, "run: refused, the device failed earlier"));
  CHECK(has(again.message, "did not finish"));
  CHECK(ex.validation_errors() == 0);
}

// Not simulated: the submission really waits on an event nobody sets (test
// hook FRUGAL_VULKAN_FAULT=hang), so its fence never signals; the run must end
// in the bounded-wait error, not hang (ctest's TIMEOUT would catch a hang).
TEST_CASE("a fence that never signals ends in the bounded-wait error", "[vulkan][faults]") {
  VK_REQUIRE_DEVICE();
  const frugal::Graph g = small_model();
  const auto in = vk_test::random_inputs(g, 2, 13);
  const frugal::RefTensor want = frugal::reference_run(g, in).at("y");
  vk_test::Executor ex(g, "{\"timeout_s\": 0.5}");
  REQUIRE(ex.ok());
  REQUIRE(ex.set_budget(1u << 20).ok());
  std::vector<HostTensor> out;
  {
    FaultScope fault("hang");
    const vk_test::Status st = ex.run(host_inputs(in), out);
    INFO(st.message);
    CHECK(st.code == FRUGAL_ERR_DEVICE);
    CHECK(has(st.message, "did not finish a submission within 0.5 s (option \"timeout_s\")"));
  }
  out.clear();
  CHECK(ex.run(host_inputs(in), out).code == FRUGAL_ERR_DEVICE);  // the hung device is not used again
  vk_test::Executor later(g);
  REQUIRE(later.ok());
  REQUIRE(later.run(host_inputs(in), out).ok());
  CHECK(max_diff(out[0].data, want) < 1e-4);
  CHECK(later.validation_errors() == 0);
}
