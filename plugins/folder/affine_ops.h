// How each op interacts with a per-channel affine map m(x) = s * x + t
// (s, t vectors over the channel axis, axis 1).
//
// Folding a BN moves its map through the graph until expressive layers absorb
// it. Each op's class is part of its definition in the op registry
// (frugal/model/ops.h: OpInfo::fold, fold_rule); classify() refines it by the
// node's attributes, constants and shapes. An op not in the registry is
// non-affine: a boundary the map cannot cross (safe: an unknown op can only make
// the folder fold less, never fold wrongly).
#pragma once

#include <string>
#include <vector>

#include "folder/feature_shapes.h"
#include "frugal/model/graph.h"
#include "frugal/model/op.h"

namespace frugal::folding {

using Interaction = FoldClass;

const char* interaction_name(Interaction i);

// The table row refined by the node's attributes, constant inputs and shapes
// (e.g. AveragePool is Commutes, or CommutesScaleOnly when it counts padding).
// `why` names the node and says what decided a restrictive answer.
struct OpInteraction {
  Interaction kind = Interaction::NonAffine;
  std::string why;
};
OpInteraction classify(const Graph& g, const Node& n, const ShapeMap& shapes);

// The input slots through which the map travels (data); every other input of a
// node in a component must be a constant (weights, shapes, scales, pads).
std::vector<size_t> data_inputs(const Node& n);

// For a Conv (or pool) that reads zero padding: "pads=[1,1,1,1]" or
// "auto_pad=SAME_UPPER"; "" when no window ever reads padding.
std::string zero_padding(const Node& n, const ShapeMap& shapes);

// "'name' (OpType)", the way reports name nodes.
std::string describe_node(const Node& n);

}  // namespace frugal::folding
