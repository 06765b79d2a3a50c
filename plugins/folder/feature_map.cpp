#include "folder/feature_map.h"

#include <algorithm>
#include <cmath>

namespace frugal::folding {

FeatureMap FeatureMap::identity(size_t features) {
  FeatureMap m;
  m.scale.assign(features, 1.0);
  m.shift.assign(features, 0.0);
  return m;
}

bool FeatureMap::is_identity() const {
  return std::all_of(scale.begin(), scale.end(), [](double s) { return s == 1.0; }) && shift_is_zero();
}

bool FeatureMap::shift_is_zero() const {
  return std::all_of(shift.begin(), shift.end(), [](double t) { return t == 0.0; });
}

int64_t FeatureMap::first_zero_scale() const {
  for (size_t i = 0; i < scale.size(); ++i)
    if (scale[i] == 0.0) return static_cast<int64_t>(i);
  return -1;
}

int64_t FeatureMap::first_negative_scale() const {
  for (size_t i = 0; i < scale.size(); ++i)
    if (scale[i] < 0.0) return static_cast<int64_t>(i);
  return -1;
}

namespace {
bool close(double a, double b) {
  return std::fabs(a - b) <= 1e-12 * std::max({1.0, std::fabs(a), std::fabs(b)});
}
}  // namespace

bool same_map(const FeatureMap& a, const FeatureMap& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!close(a.scale[i], b.scale[i]) || !close(a.shift[i], b.shift[i])) return false;
  return true;
}

FeatureMap slice(const FeatureMap& m, size_t begin, size_t count) {
  FeatureMap s;
  s.scale.assign(m.scale.begin() + begin, m.scale.begin() + begin + count);
  s.shift.assign(m.shift.begin() + begin, m.shift.begin() + begin + count);
  return s;
}

FeatureMap join(const std::vector<FeatureMap>& parts) {
  FeatureMap j;
  for (const FeatureMap& p : parts) {
    j.scale.insert(j.scale.end(), p.scale.begin(), p.scale.end());
    j.shift.insert(j.shift.end(), p.shift.begin(), p.shift.end());
  }
  return j;
}

std::optional<FeatureMap> regroup(const FeatureMap& m, int64_t inner_in, int64_t features_out,
                                  int64_t inner_out) {
  if (inner_in <= 0 || features_out <= 0 || inner_out <= 0) return std::nullopt;
  const int64_t elements = static_cast<int64_t>(m.size()) * inner_in;
  if (features_out * inner_out != elements) return std::nullopt;
  FeatureMap out;
  out.scale.resize(features_out);
  out.shift.resize(features_out);
  for (int64_t f = 0; f < features_out; ++f) {
    // Elements [f*inner_out, (f+1)*inner_out) must all come from features with one map.
    const int64_t first = f * inner_out, last = first + inner_out - 1;
    const int64_t g0 = first / inner_in, g1 = last / inner_in;
    for (int64_t g = g0 + 1; g <= g1; ++g)
      if (m.scale[g] != m.scale[g0] || m.shift[g] != m.shift[g0]) return std::nullopt;
    out.scale[f] = m.scale[g0];
    out.shift[f] = m.shift[g0];
  }
  return out;
}

}  // namespace frugal::folding
