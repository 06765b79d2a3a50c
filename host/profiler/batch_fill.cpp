#include "profiler/batch_fill.h"

#include <cmath>
#include <string>

#include "frugal/error.h"

namespace frugal {

std::vector<double> fill_batch_times(const std::map<int, double>& measured, int batch_max) {
  if (measured.empty()) throw Error("fill_batch_times: no measured batch size to fill from");
  if (batch_max < 1)
    throw Error("fill_batch_times: batch_max must be >= 1, got " + std::to_string(batch_max));
  for (const auto& [b, t] : measured)
    if (b < 1 || !std::isfinite(t) || t < 0)
      throw Error("fill_batch_times: bad measurement at batch " + std::to_string(b) + ": " +
                  std::to_string(t) + " s");
  std::vector<double> out(static_cast<size_t>(batch_max));
  for (int b = 1; b <= batch_max; ++b) {
    auto hi = measured.lower_bound(b);  // first measured >= b
    double t;
    if (hi != measured.end() && hi->first == b) {
      t = hi->second;
    } else if (hi == measured.begin()) {
      t = hi->second * b / hi->first;  // below the range: same per-sample time
    } else if (hi == measured.end()) {
      auto last = std::prev(hi);
      t = last->second * b / last->first;  // above the range: same per-sample time
    } else {
      auto lo = std::prev(hi);
      const double w = static_cast<double>(b - lo->first) / (hi->first - lo->first);
      t = lo->second + w * (hi->second - lo->second);
    }
    out[static_cast<size_t>(b - 1)] = t;
  }
  return out;
}

}  // namespace frugal
