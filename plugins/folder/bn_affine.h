// A BatchNormalization node in inference mode as a per-channel affine map.
//
// ONNX: y = gamma * (x - mean) / sqrt(var + eps) + beta (the paper's sigma + eps
// is not what ONNX computes). Per channel k:
//   a[k] = gamma[k] / sqrt(var[k] + eps),   c[k] = beta[k] - a[k] * mean[k],
// so that BN(x) = a * x + c. Computed in double, with the node's own epsilon.
#pragma once

#include <string>
#include <vector>

#include "frugal/model/graph.h"

namespace frugal::folding {

struct BnAffine {
  std::vector<double> scale;  // a
  std::vector<double> shift;  // c
  double epsilon = 1e-5;
};

struct BnReading {
  bool ok = false;
  BnAffine affine;
  std::string reason;  // why the node can never be folded (when !ok)
};

// Reads node `n` (a BatchNormalization). Refuses, with a reason, training mode
// (training_mode=1 or more than one output in use), spatial=0, parameters that
// are not constants, mismatched lengths and a non-positive var + eps.
BnReading read_batchnorm(const Graph& g, const Node& n);

bool is_batchnorm(const Node& n);

}  // namespace frugal::folding
