// Concrete shapes and dtypes for every tensor of a graph, from its input sizes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "frugal/model/graph.h"

namespace frugal {

// Fills shape (and dtype) of every tensor for the given input dims; inputs not
// listed keep their declared shape, whose symbolic dims must then be resolvable.
// Inputs' own shapes are overwritten with the concrete dims used. Throws Error
// naming the node on mismatch (e.g. "Conv node 'conv1': input 'x' has 4
// channels, weight expects 3"), or naming the input / unknown ops. On error the
// graph is left unchanged.
void infer_shapes(Graph& g, const std::map<std::string, std::vector<int64_t>>& input_dims);

// Convenience: every graph input's declared shape with dim 0 set to `batch`.
void infer_shapes_for_batch(Graph& g, int64_t batch);

}  // namespace frugal
