#include "linear_chain.h"

#include <algorithm>

namespace frugal::planner {

LinearChain linearize(const CostTable& costs) {
  const int n = costs.size();
  LinearChain ch;
  ch.boundary.assign(n + 1, 0);
  // Tensor t (produced at position p, network input p = -1) is held at
  // boundaries p+1 .. last reader, or to the end when it is a network output.
  for (int t = kNetworkInput; t < n; ++t) {
    const std::vector<int>& readers = costs.tensor_consumers(t);
    const int last =
        costs.kept_to_end(t) || readers.empty() ? n : *std::max_element(readers.begin(), readers.end());
    for (int k = t + 1; k <= last; ++k) ch.boundary[k] += costs.tensor_per_sample(t);
  }
  return ch;
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
