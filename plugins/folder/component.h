// The connected component of a BN node and the fold it allows (Theorem 1 of
// BaN-OFF, made exact).
//
// Backward: the BN's input side C_in takes the BN: every value reachable from
// the BN input through ops of the table changes to new = a*old + c (channels
// remapped, the shift split at Adds), expressive producers absorb that (they
// are the leaves the fold goes "into"), and every other expressive reader of a
// changed value gets the inverse update ("compensated"; impossible where a = 0).
// Forward: the output side C_out gives the BN away: values downstream of it
// now hold old = a*new + c, expressive readers absorb it, expressive producers
// joining the component (the other input of an Add) are compensated.
//
// A side fails where its map would reach a graph input or output, a constant, a
// non-affine op (any op not in affine_ops' table), a MaxPool under a negative
// scale, zero padding under a non-zero shift, or a zero scale that would need
// an inverse: that is the theorem's "leaf that is not expressive", plus what
// exactness adds. Values whose map is the identity (untouched channels of a
// Concat) do not spread, so their producers do not matter.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "folder/bn_affine.h"
#include "folder/feature_shapes.h"
#include "folder/weight_updates.h"
#include "frugal/model/graph.h"

namespace frugal::folding {

enum class FoldDirection { Backward, Forward };
const char* direction_name(FoldDirection d);  // "backward" / "forward"

struct FoldPlan {
  int bn_node = -1;
  FoldDirection direction = FoldDirection::Backward;
  std::vector<ExpressiveEdit> edits;     // ascending node index
  std::vector<std::string> into;         // nodes that absorb the BN
  std::vector<std::string> compensated;  // nodes given the inverse update
};

struct SearchOptions {
  // The naive baseline: the side must be a chain (every value read once, no
  // Add or multi-input Concat), so nothing is ever compensated.
  bool sequential_only = false;
  // Alternatives tried at Adds (which input takes the shift) before giving up.
  int max_branches = 256;
};

struct PlanAttempt {
  std::optional<FoldPlan> plan;
  std::string reason;  // why this side fails, when !plan
};

PlanAttempt plan_fold(const Graph& g, const ShapeMap& shapes, int bn_node, const BnAffine& bn,
                      FoldDirection direction, const SearchOptions& options);

}  // namespace frugal::folding
