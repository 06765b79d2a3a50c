#include "arena_sentinel_check.h"

#include <catch2/catch.hpp>
#include <cstdlib>
#include <iostream>
#include <random>

#include "memory_model.h"
#include "zoo/zoo.h"

namespace exec_test {

namespace {

uint64_t touched_total = 0, peak_total = 0;

// Runs `steps` in an arena of exactly their peak; CHECKs what the sentinel shows.
void check_plan(PluginExecutor& ex, MemoryModel& mm, const std::vector<Step>& steps,
                const std::vector<HostTensor>& in, int64_t batch, bool writes_whole_peak) {
  const uint64_t peak = mm.peak(steps, batch);
  REQUIRE(ex.set_budget(peak).ok());
  std::vector<HostTensor> out;
  nlohmann::json report;
  const Status st = ex.run(in, out, MemoryModel::to_json(steps, mm.description()), &report);
  INFO(st.message);
  REQUIRE(st.ok());
  INFO("report: " << report.dump());
  REQUIRE(report.contains("touched_bytes"));  // the hook is on (ctest sets FRUGAL_ARENA_SENTINEL=1)
  const uint64_t touched = report["touched_bytes"].get<uint64_t>();
  CHECK(report["peak_bytes"].get<uint64_t>() == peak);
  CHECK(touched <= peak);  // nothing written past the budget, in the arena or its guard
  CHECK(touched > 0);
  if (writes_whole_peak) CHECK(touched == peak);  // the last byte of the peak is used
  touched_total += touched;
  peak_total += peak;
}

}  // namespace

void check_arena_sentinel(const std::string& executor, const MakeExecutorFor& make, bool writes_whole_peak) {
  const char* hook = std::getenv("FRUGAL_ARENA_SENTINEL");
  INFO("needs FRUGAL_ARENA_SENTINEL=1 (ctest sets it)");
  REQUIRE((hook && std::string(hook) == "1"));
  std::mt19937_64 rng(17);
  int plans = 0;
  touched_total = peak_total = 0;
  for (const std::string& name : frugal::zoo_names()) {
    if (name.rfind("toy_", 0) != 0) continue;
    INFO(executor << " executor, " << name);
    const frugal::Graph g = frugal::build_zoo_model(name, 5);
    std::unique_ptr<PluginExecutor> ex = make(g);
    INFO(ex->created.message);
    REQUIRE(ex->ok());
    MemoryModel mm(*ex);
    const nlohmann::json d = mm.description();
    const int64_t batch = 3;
    std::vector<int64_t> dims = d["inputs"][0]["shape"].get<std::vector<int64_t>>();
    dims[0] = batch;
    size_t n = 1;
    for (int64_t x : dims) n *= size_t(x);
    const std::vector<HostTensor> in = {HostTensor{d["inputs"][0]["name"], dims, random_floats(n, 3)}};
    check_plan(*ex, mm, mm.whole_batch(batch), in, batch, writes_whole_peak);
    for (int k = 0; k < 4; ++k, ++plans)
      check_plan(*ex, mm, mm.random_plan(batch, rng), in, batch, writes_whole_peak);
  }
  CHECK(plans >= 12);
  std::cout << executor << ": " << plans << " random plans and 4 whole-batch runs wrote " << touched_total
            << " of the " << peak_total << " bytes of their peaks (a budget of exactly the peak is enough: "
            << "nothing past it was touched)\n";
}

}  // namespace exec_test
