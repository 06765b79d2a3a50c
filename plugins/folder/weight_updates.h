// Exact parameter updates of expressive layers (Conv, Gemm, MatMul), computed in
// double and written back as float32.
//
// Output side (the layer must now produce new = S * old + T on its output
// features o):   W[o, ...] *= S[o];   b[o] = S[o] * b[o] + T[o].
// Input side (the layer now reads `new` where it used to read old = P * new + Q,
// per input feature i):
//   W[o, i, ...] *= P[i];   b[o] += sum_{i,k} W_orig[o, i, k] * Q[i]
// (exact only if the layer never reads zero padding where Q != 0: the planner
// checks that). Grouped convs map input channel i = g * (C/G) + j to the
// filters of group g. When a layer has both, the input side is applied first.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "folder/feature_map.h"
#include "frugal/model/graph.h"

namespace frugal::folding {

struct ExpressiveEdit {
  int node = -1;
  std::optional<FeatureMap> input;   // old = scale * new + shift on its data input
  std::optional<FeatureMap> output;  // new = scale * old + shift on its output
};

// Number of features of an expressive node's data input (input_side) or output,
// from its constant weight; nullopt when the node is not one the folder edits.
std::optional<int64_t> expressive_features(const Graph& g, const Node& n, bool input_side);

// Applies the edit to g.nodes[edit.node]. Weights read by any other node (or
// coming from Constant nodes) are cloned under a fresh name first, so a shared
// tensor never changes under another reader; names no longer read after the
// edit are appended to `detached` for the caller to drop. A MatMul that needs a
// bias becomes a Gemm. Gemm's alpha and beta are folded into B and C (then 1).
// Throws frugal::Error naming the node on inconsistent sizes.
void apply_edit(Graph& g, const ExpressiveEdit& edit, std::vector<std::string>& detached);

}  // namespace frugal::folding
