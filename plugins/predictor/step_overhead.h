// The per-step overhead of predicted tables. A measured table carries, per
// layer, "step_overhead_s": what a step of the layer costs inside a plan on top
// of its time alone (host/profiler/profiler.h). The trees do not learn it (it is
// a few microseconds to a millisecond of cache refills and allocations, noisy
// from run to run); the predictor file records the training set's mean per
// layer family instead, and predicted tables carry that, so plans from them
// price steps as plans from measured tables do. The per-sample part
// ("step_overhead_per_sample_s": inputs and outputs that a run, unlike the
// layer timed alone, finds out of cache) grows with the bytes a sample moves:
// the file records seconds per byte of input and output per family, and a
// predicted layer gets that rate times its bytes per sample.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "layer_facts.h"

namespace frugal::predictor {

// {"by_family": {family: mean seconds}, "default": mean over all layers,
//  "layers": how many layers had one, "per_sample": {"by_family": {family: rate},
//  "default": rate, "layers": N}}, from the layers of `tables` (parallel to
// `facts`) that carry "step_overhead_s" (the means) and
// "step_overhead_per_sample_s" (the rates: the summed overheads over the summed
// input and output bytes of one sample, in seconds per byte); none: zeros.
nlohmann::json fit_step_overheads(const std::vector<std::vector<LayerFacts>>& facts,
                                  const std::vector<const nlohmann::json*>& tables);

// Sets the table's "step_overhead_s" to the file's default, and each layer's
// that has none (a layer measured with its overhead keeps it) to its family's
// mean, else the default; each layer's "step_overhead_per_sample_s" that it
// has not to its family's rate (else the default rate) times its input and
// output bytes per sample.
void fill_step_overheads(const nlohmann::json& fitted, const std::vector<LayerFacts>& facts,
                         nlohmann::json& costs);

}  // namespace frugal::predictor
