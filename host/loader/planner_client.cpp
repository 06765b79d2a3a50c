#include "loader/planner_client.h"

#include "loader/plugin_call.h"
#include "profiler/move_price.h"

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

namespace {

uint64_t moved_bytes(const ExecutorClient& ex, const nlohmann::json& steps, const nlohmann::json& options) {
  const nlohmann::json placed = ex.place({{"steps", steps}}, options.at("batch").get<int64_t>(),
                                         options.at("budget_bytes").get<uint64_t>());
  return placed["moved_bytes"].get<uint64_t>();
}

nlohmann::json unpriced(nlohmann::json plan, const std::string& why, const ExecutorClient& ex,
                        const nlohmann::json& options) {
  plan["moves"] = {{"priced", false}, {"why", why}};
  if (ex.can_place() && plan.contains("steps"))
    plan["moves"]["moved_bytes"] = moved_bytes(ex, plan["steps"], options);
  return plan;
}

}  // namespace

nlohmann::json make_plan_pricing_moves(const LoadedPlugin& planner, const nlohmann::json& costs,
                                       const nlohmann::json& options, const ExecutorClient& executor) {
  const double price = options.contains("budget_bytes") && options["budget_bytes"].is_number_unsigned()
                           ? move_s_per_byte(costs, options["budget_bytes"].get<uint64_t>())
                           : -1.0;
  if (!executor.can_place())
    return unpriced(make_plan(planner, costs, options), "the executor cannot place a plan offline", executor,
                    options);
  if (!(price >= 0))
    return unpriced(make_plan(planner, costs, options), "the cost table has no move price (profile it again)",
                    executor, options);
  nlohmann::json first_options = options;
  first_options["candidate_steps"] = true;
  nlohmann::json first;
  try {
    first = make_plan(planner, costs, first_options);
  } catch (const Error& e) {  // a planner without the option: plan as it is
    return unpriced(make_plan(planner, costs, options),
                    std::string("the planner does not take candidate_steps (") + e.what() + ")", executor,
                    options);
  }
  nlohmann::json extra = nlohmann::json::object(), by_method = nlohmann::json::object();
  for (const auto& c : first.value("candidates", nlohmann::json::array()))
    if (c.contains("steps") && c.contains("method")) {
      const uint64_t moved = moved_bytes(executor, c["steps"], options);
      by_method[c["method"].get<std::string>()] = moved;
      extra[c["method"].get<std::string>()] = double(moved) * price;
    }
  nlohmann::json second_options = options;
  second_options["extra_time_s"] = extra;
  nlohmann::json plan = make_plan(planner, costs, second_options);
  const std::string method = plan.value("method", "");
  plan["moves"] = {{"priced", true},
                   {"move_s_per_byte", price},
                   {"moved_bytes", by_method.value(method, uint64_t{0})},
                   {"seconds", extra.value(method, 0.0)},
                   {"by_method", by_method}};
  return plan;
}

}  // namespace frugal
