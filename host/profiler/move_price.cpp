#include "profiler/move_price.h"

#include <cmath>
#include <vector>

namespace frugal {

namespace {

constexpr uint64_t kSmallest = uint64_t{1} << 20, kLargest = uint64_t{256} << 20;

// What the whole batch at batch_max could hold at once: every layer's output (a bound on any plan's budget).
uint64_t largest_useful_arena(const nlohmann::json& costs) {
  uint64_t sum = 0;
  for (const auto& L : costs.value("layers", nlohmann::json::array()))
    if (L.contains("out_bytes") && L["out_bytes"].is_array() && !L["out_bytes"].empty())
      sum += L["out_bytes"].back().get<uint64_t>();
  return sum;
}

}  // namespace

bool add_move_price(ExecutorClient& ex, int repeats, nlohmann::json& costs) {
  if (!ex.can_place()) return false;
  nlohmann::json sizes = nlohmann::json::array(), prices = nlohmann::json::array();
  // 1, 4, 16, ... MiB up to the first size that holds every output at batch_max
  // (beyond it the end value holds): a small network is not timed in 256 MiB.
  const uint64_t need = largest_useful_arena(costs);
  for (uint64_t capacity = kSmallest; capacity <= kLargest; capacity *= 4) {
    sizes.push_back(capacity);
    prices.push_back(ex.time_move(capacity, repeats));
    if (capacity >= need) break;
  }
  costs["move"] = {
      {"arena_bytes", sizes},
      {"s_per_byte", prices},
      {"repeats", repeats},
      {"measured_by", "median seconds per byte of sliding 3/4 of an arena of that size by the rest"}};
  return true;
}

double move_s_per_byte(const nlohmann::json& costs, uint64_t capacity) {
  if (!costs.is_object() || !costs.contains("move") || !costs["move"].is_object()) return -1;
  const nlohmann::json& m = costs["move"];
  const nlohmann::json sizes = m.value("arena_bytes", nlohmann::json()),
                       prices = m.value("s_per_byte", nlohmann::json());
  if (!sizes.is_array() || !prices.is_array() || sizes.size() != prices.size() || sizes.empty()) return -1;
  std::vector<double> x, y;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (!sizes[i].is_number() || !prices[i].is_number() || !(sizes[i].get<double>() > 0)) return -1;
    const double at = std::log(sizes[i].get<double>());
    if (i > 0 && !(at > x.back())) return -1;  // ascending
    x.push_back(at);
    y.push_back(prices[i].get<double>());
  }
  const double at = std::log(double(std::max<uint64_t>(capacity, 1)));
  if (at <= x.front()) return y.front();
  if (at >= x.back()) return y.back();
  size_t k = 1;
  while (x[k] < at) ++k;
  const double t = (at - x[k - 1]) / (x[k] - x[k - 1]);
  return y[k - 1] + t * (y[k] - y[k - 1]);
}

}  // namespace frugal
