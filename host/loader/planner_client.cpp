#include "loader/planner_client.h"

#include "loader/plugin_call.h"

namespace frugal {

nlohmann::json make_plan(const LoadedPlugin& planner, const nlohmann::json& costs,
                         const nlohmann::json& options) {
  const auto& api = plugin_api<frugal_planner_api>(planner, FRUGAL_KIND_PLANNER);
  const std::string costs_text = costs.dump();
  const std::string options_text = options.is_null() ? std::string("{}") : options.dump();
  BlobHolder out;
  frugal_error err = fresh_error();
  const int status = api.plan(costs_text.c_str(), options_text.c_str(), out.out(), &err);
  check_status(planner, status, err, "plan");
  nlohmann::json plan = blob_json(planner, out, "plan", false);
  if (!plan.is_object())
    throw Error(plugin_label(planner) + ": returned OK but the plan is a JSON " +
                std::string(plan.type_name()) + ", not an object");
  return plan;
}

}  // namespace frugal
