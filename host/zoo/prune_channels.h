// Structured pruning of a built network, for profiling pruned variants (the
// predictor's training basis, as perf4sight's): every conv whose output
// channels can shrink on their own loses the given share of its filters, and
// the layers after it lose the matching channels.
#pragma once

#include "frugal/model/graph.h"

namespace frugal {

// A conv can shrink alone when its output reaches, through per-channel ops
// (BatchNormalization, activations, pooling, Dropout, Identity) and depthwise
// convs, only dense convs: not an Add, Concat, Flatten or a graph output.
// Each such conv keeps max(1, round(C x (1 - share))) of its C filters (the
// first ones); depthwise convs on the way keep the same channels, and the
// dense convs reading them the matching input channels. share in [0, 1).
// Throws Error for a share outside it.
Graph prune_channels(const Graph& g, double share);

}  // namespace frugal
