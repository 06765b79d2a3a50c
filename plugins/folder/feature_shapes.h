// Shapes of the values the folder reasons about. Folding needs the channel count
// of every value a BN's map travels through (and the spatial size behind a
// Flatten), but must also work on graphs with ops the host does not know, so
// this inference is tolerant: a value whose shape cannot be derived is simply
// absent, and the folder treats it as a boundary.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "frugal/model/graph.h"

namespace frugal::folding {

// Value name -> dims. Dimension 0 (the batch) is inferred at batch 1 when the
// graph declares it symbolic; the folder never relies on the batch size.
using ShapeMap = std::map<std::string, std::vector<int64_t>>;

// Declared shapes first (inputs, initializers, value_info), then the host's op
// registry (frugal/model/ops.h) node by node; nodes that are unknown or fail keep their
// outputs' declared shapes, if any.
ShapeMap infer_feature_shapes(const Graph& g);

// The dims of `name`, if known.
std::optional<std::vector<int64_t>> shape_of(const ShapeMap& shapes, const std::string& name);

}  // namespace frugal::folding
