// The predictor's features for one layer at one batch size (docs/PREDICTOR.md
// gives every formula): perf4sight's analytic inference features (weights,
// activations, im2col, FFT and Winograd memory and operations) from the head
// node's geometry, and what the executor says: MACs, exact bytes, threads.
#pragma once

#include <string>
#include <vector>

#include "layer_facts.h"

namespace frugal::predictor {

// Feature names, in the order features() gives them; the file's schema.
const std::vector<std::string>& feature_names();

// The features of layer `f` at batch `b` (1-based; b <= f.in_bytes.size()).
// The first is the family's index in `families`, the second the kind's (head op
// and kernel path) in `kinds`: the codes training saw; a kind it never saw is
// NaN, which XGBoost takes as a missing value.
std::vector<double> features(const LayerFacts& f, int b, const std::vector<std::string>& families,
                             const std::vector<std::string>& kinds);

// A pool's comparisons or additions: one per window element per output
// (b n oh ow kh kw); 0 for other layers. The executor counts no MACs for pools,
// and a 3x3 window at stride 1 reads each input 9 times where stride 2 reads
// it about twice: bytes alone do not say what a pool costs.
double window_ops(const LayerFacts& f, int b);

// What times are divided by before the model learns them: the batch's MACs
// and window operations plus one per float it moves (in, out, workspace and
// weights), so the model learns seconds per unit of work, which varies far
// less than seconds.
double work(const LayerFacts& f, int b);

}  // namespace frugal::predictor
