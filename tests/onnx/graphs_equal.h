// Deep comparison of two Graphs, for round-trip tests.
#pragma once

#include <string>

#include "frugal/model/graph.h"

namespace frugal::test {

// True when every field of the graphs (nodes, attributes incl. bit patterns of
// floats, tensors incl. initializer bytes, inputs/outputs, model metadata) is
// equal. Otherwise false, with the first difference described in *why.
bool graphs_equal(const Graph& a, const Graph& b, std::string* why);

}  // namespace frugal::test
