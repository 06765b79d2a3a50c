// A per-feature affine map s * x + t over axis 1 of a value (channels of an
// [N,C,H,W] activation, columns of an [N,F] matrix), constant over every other
// axis. The folder attaches one to each value a BN's fold changes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace frugal::folding {

struct FeatureMap {
  std::vector<double> scale;
  std::vector<double> shift;

  static FeatureMap identity(size_t features);
  size_t size() const { return scale.size(); }
  bool is_identity() const;
  bool shift_is_zero() const;
  // Index of the first feature with scale == 0, or -1.
  int64_t first_zero_scale() const;
  // Index of the first feature with scale < 0, or -1.
  int64_t first_negative_scale() const;
};

// Equal up to rounding (maps reached along two paths must agree).
bool same_map(const FeatureMap& a, const FeatureMap& b);

// Features [begin, begin + count).
FeatureMap slice(const FeatureMap& m, size_t begin, size_t count);
// Features of the maps one after the other (Concat on axis 1).
FeatureMap join(const std::vector<FeatureMap>& parts);

// The same elements seen with another grouping: a value whose axis-1 features
// each cover `inner_in` consecutive elements (C x H*W) reshaped so that each of
// `features_out` features covers `inner_out` elements. Flatten is
// regroup(m, H*W, C*H*W, 1). nullopt when a new feature would cover elements
// with different maps.
std::optional<FeatureMap> regroup(const FeatureMap& m, int64_t inner_in, int64_t features_out,
                                  int64_t inner_out);

}  // namespace frugal::folding
