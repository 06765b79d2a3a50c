// BatchNorm folding, the C++ entry points: BaN-OFF (every BN that Theorem 1
// allows, made exact) and the naive baseline (a BN next to an expressive layer
// along a chain). Both return the folded graph and a JSON report:
//
//   {"method": "banoff" | "naive", "bn_total": N, "bn_folded": K,
//    "parameters_removed": P, "parameters_before": .., "parameters_after": ..,
//    "passes": .., "nodes": [{"name", "folded": bool,
//      "direction": "backward" | "forward" | "none",
//      "into": [node names that absorbed it], "compensated": [node names given
//      the inverse update], "reason": "human-readable"}]}
//
// The folded graph has the same inputs and outputs (names, shapes) and, up to
// float rounding, the same function. Nothing folded: the graph comes back as is.
#pragma once

#include <nlohmann/json.hpp>

#include "frugal/model/graph.h"

namespace frugal::folding {

struct FoldOptions {
  bool allow_backward = true;  // fold into producers
  bool allow_forward = true;   // fold into consumers
  int max_branches = 256;      // alternatives tried at Adds, per BN and direction
};

// From the plugin's options JSON (null or an object with the keys above);
// throws frugal::Error naming an unknown key or a value of the wrong type.
FoldOptions parse_fold_options(const nlohmann::json& options);

struct FoldResult {
  Graph graph;
  nlohmann::json report;
};

FoldResult fold_banoff(const Graph& g, const FoldOptions& options = {});
FoldResult fold_naive(const Graph& g, const FoldOptions& options = {});

}  // namespace frugal::folding

namespace frugal {
using folding::fold_banoff;
using folding::fold_naive;
using folding::FoldOptions;
using folding::FoldResult;
using folding::parse_fold_options;
}  // namespace frugal
