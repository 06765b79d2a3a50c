#include "segment_planner.h"

#include <algorithm>
#include <limits>

namespace frugal::planner {

SegmentPlanner::SegmentPlanner(const CostTable& costs, Segment segment, const MemoryUnits& units, int samples,
                               double latency_s)
    : seg_(std::move(segment)) {
  const int n = seg_.size();
  ChainSpec s;
  s.n = n;
  s.samples = samples;
  s.units = units.budget_units;
  s.extended = true;
  s.latency_s = latency_s;
  const size_t stride = static_cast<size_t>(s.units) + 1;
  s.in_units.assign(n, std::vector<int64_t>(samples + 1));
  s.out_units.assign(n, std::vector<int64_t>(samples + 1));
  s.exact.assign(n, std::vector<float>(static_cast<size_t>(samples) * stride, kInf));
  variants_.resize(n);
  for (int e = 0; e < n; ++e) {
    for (int w = 0; w <= samples; ++w) {
      s.in_units[e][w] = units.up(seg_.boundary[e] * static_cast<uint64_t>(w));
      s.out_units[e][w] = units.up(seg_.boundary[e + 1] * static_cast<uint64_t>(w));
    }
    float* ex = s.exact[e].data();
    const SegmentElement& el = seg_.elements[e];
    if (el.layer >= 0) {
      for (int b = 1; b <= std::min(samples, costs.batch_max); ++b) {
        const int64_t need = units.up(layer_step_need(costs, seg_, e, b));
        for (int64_t m = need; m <= s.units; ++m)
          ex[(b - 1) * stride + m] = static_cast<float>(costs.time(el.layer, b));
      }
      continue;
    }
    for (const Segment& v : el.variants)
      variants_[e].push_back(std::make_unique<SegmentPlanner>(costs, v, units, samples,
                                                              std::numeric_limits<double>::infinity()));
    int variant;
    for (int b = 1; b <= samples; ++b)
      for (int m = 0; m <= s.units; ++m) ex[(b - 1) * stride + m] = special_value(e, b, m, &variant);
  }
  s.emit_exact = [this](int e, int b, int m, std::vector<LayerRun>& out) {
    const SegmentElement& el = seg_.elements[e];
    if (el.layer >= 0) {
      out.push_back({el.layer, b});
      return;
    }
    int variant;
    special_value(e, b, m, &variant);
    const SegmentPlanner& v = *variants_[e][variant];
    v.dp().trace(0, v.segment().size() - 1, b, m, out);
  };
  dp_ = std::make_unique<ChainDP>(std::move(s));
}

float SegmentPlanner::special_value(int e, int b, int m, int* best_variant) const {
  float best = kInf;
  *best_variant = -1;
  for (size_t v = 0; v < variants_[e].size(); ++v) {
    const float t = variants_[e][v]->whole(b, m);
    if (t < best) {
      best = t;
      *best_variant = static_cast<int>(v);
    }
  }
  return best;
}

}  // namespace frugal::planner
