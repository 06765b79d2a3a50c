// THE table of how each op interacts with a per-channel affine map
// m(x) = s * x + t (s, t vectors over the channel axis, axis 1).
//
// Folding a BN moves its map through the graph until expressive layers absorb
// it; this table decides, per op, whether and how the map can pass. Everything
// not listed is non-affine: a boundary the map cannot cross (safe: an unknown op
// can only make the folder fold less, never fold wrongly).
#pragma once

#include <string>
#include <vector>

#include "folder/feature_shapes.h"
#include "frugal/model/graph.h"

namespace frugal::folding {

enum class Interaction {
  Expressive,                  // y = W x + b with constant W, b: absorbs any map on either side
  Commutes,                    // op(s x + t) = s op(x) + t, channels unchanged
  CommutesIfScaleNonNegative,  // max(s x + t) = s max(x) + t only where s >= 0 (else max turns into min)
  CommutesScaleOnly,           // reads zero padding: op(s x + t) = s op(x) + t only where t = 0
  Sums,                        // Add: s (u + v) + t = (s u + t) + s v: the shift goes into one input only
  ChannelRemap,                // Flatten, Reshape, Concat: channels move to other feature positions
  NonAffine,                   // ReLU, Sigmoid, ... and every op not in the table: a boundary
};

const char* interaction_name(Interaction i);

// One row of the table, as written in docs/FOLDING.md.
struct OpTableRow {
  const char* op_type;
  Interaction kind;
  const char* rule;  // the condition, in words
};
const std::vector<OpTableRow>& op_table();

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
