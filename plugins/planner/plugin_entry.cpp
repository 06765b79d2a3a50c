// The C face of the three planners, one shared object (planners.so) with one
// plugin each: "vbs" (variable batch size per layer: the paper's DP, extended;
// never worse than fixed batch or greedy), "fbs" (fixed batch) and "greedy"
// (the paper's Greedy-VBS baseline).
#include <new>
#include <string>

#include "frugal/plugin_sdk.hpp"
#include "planners.h"

namespace {

struct PlannerInfo {
  const char* name;
  const char* description;
};

constexpr PlannerInfo kPlanners[] = {
    {"vbs", "Variable batch size per layer under a memory budget (VBS dynamic program, extended)"},
    {"fbs", "Fixed batch size: the largest uniform batch that fits, in rounds"},
    {"greedy", "Greedy-VBS: layer by layer over the whole request, each at the largest batch that fits"},
};

// Every message starts with the planner's name; a plan that cannot fit is
// FRUGAL_ERR_BUDGET, any other planner error bad input.
frugal_status plan_with(const std::string& planner, const char* costs_json, const char* options_json,
                        frugal_blob* out_plan_json, frugal_error* err) {
  using frugal::sdk::Failure;
  return frugal::sdk::guard(err, [&] {
    if (!costs_json || !out_plan_json)
      frugal::sdk::fail_invalid(planner + ": costs_json and out_plan_json must not be NULL");
    try {
      const std::string plan =
          frugal::planner::run_planner(planner, costs_json, options_json ? options_json : "").dump();
      frugal::sdk::put_blob(out_plan_json, plan);
    } catch (const frugal::planner::BudgetError& e) {
      frugal::sdk::fail_budget(planner + ": " + e.what());
    } catch (const std::bad_alloc&) {
      throw;
    } catch (const std::exception& e) {
      frugal::sdk::fail_invalid(planner + ": " + e.what());
    }
  });
}

template <int I>
frugal_status plan(const char* costs_json, const char* options_json, frugal_blob* out, frugal_error* err) {
  return plan_with(kPlanners[I].name, costs_json, options_json, out, err);
}

const frugal_planner_api kApis[] = {{sizeof(frugal_planner_api), &plan<0>},
                                    {sizeof(frugal_planner_api), &plan<1>},
                                    {sizeof(frugal_planner_api), &plan<2>}};

template <int I>
frugal_plugin_descriptor descriptor() {
  return frugal::sdk::describe_plugin<FRUGAL_KIND_PLANNER>(kPlanners[I].name, "0.1.0",
                                                           kPlanners[I].description, kApis[I]);
}

const frugal_plugin_descriptor kDescriptors[] = {descriptor<0>(), descriptor<1>(), descriptor<2>()};

}  // namespace

FRUGAL_DEFINE_FACTORY(kDescriptors)
