#include "linear_chain.h"

#include <algorithm>

namespace frugal::planner {

LinearChain linearize(const CostTable& costs) {
  const int n = costs.size();
  LinearChain ch;
  ch.boundary.assign(n + 1, 0);
  // Tensor t (produced at position p, network input p = -1) is held at
  // boundaries p+1 .. last reader, or to the end when nobody reads it.
  for (int t = kNetworkInput; t < n; ++t) {
    const std::vector<int>& readers = costs.tensor_consumers(t);
    const int last = readers.empty() ? n : *std::max_element(readers.begin(), readers.end());
    for (int k = t + 1; k <= last; ++k) ch.boundary[k] += costs.tensor_per_sample(t);
  }
  return ch;
}

ChainSpec layer_chain_spec(const CostTable& costs, const LinearChain& chain, const MemoryUnits& units,
                           int samples, bool extended, double latency_s) {
  const int n = costs.size();
  ChainSpec s;
  s.n = n;
  s.samples = samples;
  s.units = units.budget_units;
  s.extended = extended;
  s.latency_s = latency_s;
  const size_t stride = static_cast<size_t>(s.units) + 1;
  s.in_units.assign(n, std::vector<int64_t>(samples + 1));
  s.out_units.assign(n, std::vector<int64_t>(samples + 1));
  s.exact.assign(n, std::vector<float>(static_cast<size_t>(samples) * stride, kInf));
  for (int k = 0; k < n; ++k) {
    for (int w = 0; w <= samples; ++w) {
      s.in_units[k][w] = units.up(chain.boundary[k] * static_cast<uint64_t>(w));
      s.out_units[k][w] = units.up(chain.boundary[k + 1] * static_cast<uint64_t>(w));
    }
    for (int b = 1; b <= std::min(samples, costs.batch_max); ++b) {
      const int64_t need = units.up(chain.step_need(costs, k, b));
      const float t = static_cast<float>(costs.time(k, b));
      for (int64_t m = need; m <= s.units; ++m) s.exact[k][(b - 1) * stride + m] = t;
    }
  }
  s.emit_exact = [](int e, int b, int, std::vector<LayerRun>& out) { out.push_back({e, b}); };
  return s;
}

std::vector<Step> assign_samples(const std::vector<LayerRun>& runs, int n_layers) {
  std::vector<int> next(n_layers, 0);
  std::vector<Step> steps;
  steps.reserve(runs.size());
  for (const LayerRun& r : runs) {
    steps.push_back({r.layer, next[r.layer], r.count});
    next[r.layer] += r.count;
  }
  return steps;
}

}  // namespace frugal::planner
