#include "profiler/cost_fit.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "frugal/error.h"
#include "profiler/cost_numbers.h"

namespace frugal {

double BatchTimeModel::batch_seconds(int b) const {
  return fixed_s + per_sample_s * b + idle_slot_s * idle_slots(b, threads) +
         (spill_from > 0 ? spill_s * std::max(0, b - spill_from) : 0.0);
}

int idle_slots(int b, int threads) {
  if (threads <= 1 || b < threads || b % threads == 0) return 0;
  return threads - b % threads;
}

namespace {

constexpr int kParts = 4;  // fixed, per sample, per idle slot, per sample beyond the knee

double part_value(int part, int b, int threads, int knee) {
  switch (part) {
    case 0:
      return 1.0;
    case 1:
      return double(b);
    case 2:
      return double(idle_slots(b, threads));
    default:
      return double(std::max(0, b - knee));
  }
}

// Weighted least squares on the parts in `mask` (Gaussian elimination on the
// normal equations); false when they are singular on these sizes (a part that
// is 0 at every measured size, or two that are proportional).
bool solve_parts(const std::map<int, double>& measured, int threads, int knee, unsigned mask,
                 double coef[kParts]) {
  int idx[kParts], n = 0;
  for (int p = 0; p < kParts; ++p)
    if (mask & (1u << p)) idx[n++] = p;
  double a[kParts][kParts + 1] = {};
  for (const auto& [b, t] : measured) {
    const double w = 1.0 / (t * t);
    for (int r = 0; r < n; ++r) {
      const double xr = part_value(idx[r], b, threads, knee);
      for (int c = 0; c < n; ++c) a[r][c] += w * xr * part_value(idx[c], b, threads, knee);
      a[r][n] += w * xr * t;
    }
  }
  double scale = 0;
  for (int r = 0; r < n; ++r) scale = std::max(scale, std::fabs(a[r][r]));
  for (int c = 0; c < n; ++c) {
    int pivot = c;
    for (int r = c + 1; r < n; ++r)
      if (std::fabs(a[r][c]) > std::fabs(a[pivot][c])) pivot = r;
    if (!(std::fabs(a[pivot][c]) > 1e-12 * scale)) return false;
    std::swap(a[c], a[pivot]);
    for (int r = 0; r < n; ++r) {
      if (r == c) continue;
      const double f = a[r][c] / a[c][c];
      for (int k = c; k <= n; ++k) a[r][k] -= f * a[c][k];
    }
  }
  for (int p = 0; p < kParts; ++p) coef[p] = 0;
  for (int r = 0; r < n; ++r) coef[idx[r]] = a[r][n] / a[r][r];
  return true;
}

double weighted_residual(const std::map<int, double>& measured, const BatchTimeModel& m) {
  double sum = 0;
  for (const auto& [b, t] : measured) {
    const double e = (m.batch_seconds(b) - t) / t;
    sum += e * e;
  }
  return sum;
}

struct Candidate {
  BatchTimeModel model;
  double residual = HUGE_VAL;
  int parameters = 0;  // non-zero parts, plus the knee's position
};

// The best non-negative fit over the subsets in `subsets` (in order of
// preference on a tie) at knee `knee` (0: none).
Candidate best_fit(const std::map<int, double>& measured, int threads, int knee,
                   const std::vector<unsigned>& subsets) {
  Candidate best;
  best.model.threads = threads;
  for (unsigned mask : subsets) {
    double c[kParts];
    if (!solve_parts(measured, threads, knee, mask, c) || c[0] < 0 || c[1] < 0 || c[2] < 0 || c[3] < 0)
      continue;
    const int knee_at = knee > 0 && c[3] > 0 ? knee : 0;
    const BatchTimeModel m{c[0], c[1], c[2], threads, c[3], knee_at};
    const double r = weighted_residual(measured, m);
    if (r < best.residual * (1 - 1e-9) - 1e-18) {
      int used = knee_at > 0 ? 1 : 0;  // the knee's position is a parameter too
      for (double v : c) used += v > 0;
      best = {m, r, used};
    }
  }
  return best;
}

// Bayesian information criterion of a fit of n sizes (the residual floored so
// that exact fits compare by their parameter counts).
double information(const Candidate& c, size_t n) {
  const double dn = double(n);
  return dn * std::log(std::max(c.residual, 1e-24) / dn) + c.parameters * std::log(dn);
}

}  // namespace

BatchTimeModel fit_batch_time(const std::map<int, double>& measured, int threads) {
  if (measured.empty()) throw Error("fit_batch_time: no measured batch size");
  if (threads < 1) throw Error("fit_batch_time: threads must be >= 1, got " + std::to_string(threads));
  for (const auto& [b, t] : measured)
    if (b < 1 || !std::isfinite(t) || t <= 0)
      throw Error("fit_batch_time: bad measurement at batch " + std::to_string(b) + ": " + std::to_string(t) +
                  " s");
  // Subsets in order of preference on a tie: per sample alone first.
  Candidate best = best_fit(measured, threads, 0, {0b010, 0b011, 0b001, 0b110, 0b111, 0b101, 0b100});
  // A knee at a measured size with 2 sizes at or below it and 3 above.
  std::vector<int> sizes;
  for (const auto& [b, t] : measured) sizes.push_back(b);
  for (size_t k = 1; k + 3 < sizes.size(); ++k) {
    const Candidate c = best_fit(measured, threads, sizes[k], {0b1010, 0b1011, 0b1110, 0b1111});
    if (c.model.spill_from > 0 && information(c, sizes.size()) < information(best, sizes.size())) best = c;
  }
  return best.model;
}

namespace {

std::string joined(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

// The table's thread count: 1 when it has none (a GPU's table, an old file).
int table_threads(const nlohmann::json& costs) {
  const nlohmann::json t = costs.value("threads", nlohmann::json());
  return t.is_number_integer() && t.get<int64_t>() >= 1 && t.get<int64_t>() <= 4096 ? int(t.get<int64_t>())
                                                                                    : 1;
}

}  // namespace

nlohmann::json fit_cost_times(const nlohmann::json& costs, const std::vector<std::string>& sources) {
  if (!costs.is_object() || !costs.contains("layers") || !costs["layers"].is_array())
    throw Error("fit: the cost table has no \"layers\" list");
  check_cost_numbers(costs, "fit");  // a null is a failed measurement, not one to skip
  nlohmann::json out = costs;
  const int threads = table_threads(costs);
  for (size_t i = 0; i < out["layers"].size(); ++i) {
    nlohmann::json& L = out["layers"][i];
    const std::string where = "fit: layer " + std::to_string(i) + " '" + L.value("name", std::string()) + "'";
    if (!L.contains("time_s") || !L["time_s"].is_array()) throw Error(where + " has no time_s list");
    const nlohmann::json& t = L["time_s"];
    const bool has_source = L.contains("source") && L["source"].is_array() && L["source"].size() == t.size();
    std::map<int, double> measured;
    for (size_t k = 0; k < t.size(); ++k) {
      if (has_source &&
          (!L["source"][k].is_string() ||
           std::find(sources.begin(), sources.end(), L["source"][k].get<std::string>()) == sources.end()))
        continue;
      if (!t[k].is_number() || !(t[k].get<double>() > 0)) continue;  // a zero time says nothing of the trend
      const int b = static_cast<int>(k) + 1;
      measured[b] = t[k].get<double>() * b;
    }
    if (measured.empty()) throw Error(where + " has no " + joined(sources, " or ") + " time above 0 to fit");
    const BatchTimeModel m = fit_batch_time(measured, threads);
    nlohmann::json fitted = nlohmann::json::array(), source = nlohmann::json::array();
    for (size_t k = 0; k < t.size(); ++k) {
      const double b = static_cast<double>(k + 1);
      fitted.push_back(m.batch_seconds(int(b)) / b);
      source.push_back("fitted");
    }
    L["measured_time_s"] = t;
    L["time_s"] = fitted;
    L["source"] = source;
    L["time_model"] = {{"fixed_s", m.fixed_s},         {"per_sample_s", m.per_sample_s},
                       {"idle_slot_s", m.idle_slot_s}, {"threads", m.threads},
                       {"spill_s", m.spill_s},         {"spill_from", m.spill_from}};
  }
  out["time_fit"] =
      "per layer T(b) = fixed_s + per_sample_s * b + idle_slot_s * idle(b) + spill_s * max(0, b - "
      "spill_from), "
      "idle(b) = the idle thread slots of b's last round of `threads` samples (0 below `threads`), the knee "
      "spill_from where it lowers the information criterion (0: none), least squares on relative errors";
  return out;
}

}  // namespace frugal
