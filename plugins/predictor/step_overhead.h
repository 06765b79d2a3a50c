// The per-step overhead of predicted tables. A measured table carries, per
// layer, "step_overhead_s": what a step of the layer costs inside a plan on top
// of its time alone (host/profiler/profiler.h). The trees do not learn it (it is
// a few microseconds to a millisecond of cache refills and allocations, noisy
// from run to run); the predictor file records the training set's median per
// layer family instead, and predicted tables carry that, so plans from them
// price steps as plans from measured tables do.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "layer_facts.h"

namespace frugal::predictor {

// {"by_family": {family: median seconds}, "default": median over all layers,
//  "layers": how many layers had one}, from the layers of `tables` (parallel to
// `facts`) that carry "step_overhead_s"; none: {"by_family": {}, "default": 0, "layers": 0}.
nlohmann::json fit_step_overheads(const std::vector<std::vector<LayerFacts>>& facts,
                                  const std::vector<const nlohmann::json*>& tables);

// Sets the table's "step_overhead_s" to the file's default, and each layer's
// that has none (a layer measured with its overhead keeps it) to its family's
// median, else the default.
void fill_step_overheads(const nlohmann::json& fitted, const std::vector<LayerFacts>& facts,
                         nlohmann::json& costs);

}  // namespace frugal::predictor
