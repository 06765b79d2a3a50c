// Planning-time benchmark (not a test): how the vbs planner's time grows with
// layers, batch sizes and memory units, on a ResNet-50-shaped table and on
// synthetic chains; and the time per sample VBS reaches against FBS and Greedy.
// Times are CPU seconds of the planning process (best of three).
//   build-X/tests/planner/planner_bench
#include <cstdio>
#include <ctime>
#include <string>

#include "chain_dp.h"
#include "cost_table.h"
#include "planner_test_util.h"
#include "planners.h"

using namespace frugal::planner;
using nlohmann::json;

namespace {

// CPU seconds of this process: on a shared machine wall time mostly measures the neighbours.
double cpu_seconds() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

// Best of three runs of one vbs call, in CPU seconds.
double time_plan(const CostTable& costs, PlanOptions opt, json* out = nullptr) {
  double best = 1e30;
  for (int i = 0; i < 3; ++i) {
    const double t0 = cpu_seconds();
    json p = plan_vbs(costs, opt);
    best = std::min(best, cpu_seconds() - t0);
    if (out) *out = std::move(p);
  }
  return best;
}

uint64_t min_budget(const CostTable& costs, int batch) {
  PlanOptions o;
  o.budget_bytes = uint64_t{1} << 50;
  o.batch = batch;
  o.methods = {"fbs"};
  return plan_vbs(costs, o)["min_budget_bytes"].get<uint64_t>();
}

}  // namespace

int main() {
  std::printf("== ResNet-50-shaped table, batch_max 16, request 16, 256 units ==\n");
  const CostTable rn = parse_cost_table(test::resnet50_like_table(16));
  const uint64_t lo = min_budget(rn, 16);
  std::printf("%d layers; smallest budget for 16 samples: %.1f MB; -1 = no plan\n", rn.size(), lo / 1e6);
  std::printf("%10s %9s %9s %11s %11s %11s %11s %8s %6s %10s\n", "budget_MB", "cpu_s", "ext_cpu_s",
              "vbs_ms/img", "paper_ms/img", "fbs_ms/img", "greedy_ms/img", "gain", "fbs_b", "method");
  for (double f : {1.0, 1.25, 1.5, 2.0, 3.0, 5.0}) {
    PlanOptions o;
    o.budget_bytes = static_cast<uint64_t>(lo * f);
    o.batch = 16;
    json p;
    const double t_all = time_plan(rn, o, &p);
    PlanOptions e = o;
    e.methods = {"extended", "minpeak"};
    const double t_ext = time_plan(rn, e);
    auto ms = [](const json& j) {
      return j.is_object() && j.contains("time_per_sample_s") ? 1e3 * j["time_per_sample_s"].get<double>()
                                                              : -1.0;
    };
    json paper;
    for (const json& c : p["candidates"])
      if (c["method"] == "paper") paper = c;
    std::printf("%10.1f %9.3f %9.3f %11.2f %11.2f %11.2f %11.2f %7.1f%% %6d %10s\n", o.budget_bytes / 1e6,
                t_all, t_ext, 1e3 * p["time_per_sample_s"].get<double>(), ms(paper),
                ms(p["baselines"]["fbs"]), ms(p["baselines"]["greedy"]),
                p.contains("gain_vs_fbs") ? 100.0 * p["gain_vs_fbs"].get<double>() : 0.0,
                p["baselines"]["fbs"].value("batch", 0), p["method"].get<std::string>().c_str());
  }

  std::printf("\n== growth (extended DP + baselines; synthetic chains; budget 2x the smallest) ==\n");
  std::printf("%8s %6s %6s %10s %12s\n", "layers", "batch", "units", "cpu_s", "dp_table_MB");
  auto row = [](int n, int b, int units) {
    const CostTable c = parse_cost_table(test::synthetic_chain_table(n, b, 42));
    PlanOptions o;
    o.batch = b;
    o.budget_bytes = 2 * min_budget(c, b);
    o.unit_bytes = (o.budget_bytes + units - 1) / units;
    std::printf("%8d %6d %6d %10.3f %12.1f\n", n, b, units, time_plan(c, o),
                ChainDP::table_bytes(n, b, units) / 1e6);
  };
  for (int n : {10, 20, 40, 80, 160}) row(n, 16, 256);
  for (int b : {4, 8, 16, 32, 64}) row(40, b, 256);
  for (int u : {64, 128, 256, 512, 1024, 2048}) row(40, 16, u);
  return 0;
}
