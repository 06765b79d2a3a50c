// Multiply-accumulate counts per node, from the op table (ops.h).
#pragma once

#include <cstdint>

#include "frugal/model/graph.h"

namespace frugal {

// Multiply-accumulates of one execution of `n` at the shapes currently inferred
// (0 for cheap ops: elementwise, pooling, normalisation, shape ops). Conv:
// N*M*prod(out spatial)*(C/group)*prod(kernel); Gemm: M*N*K; MatMul:
// prod(batch)*M*N*K. Throws Error naming the node when its op is unknown or its
// shapes have not been inferred.
int64_t node_macs(const Graph& g, const Node& n);

}  // namespace frugal
