// Structural checks shared by the zoo tests (unit and slow).
#pragma once

#include <string>
#include <vector>

#include "frugal/model/graph.h"

namespace frugal::zoo_test {

// torchvision's parameter count for each big network (0 for toys).
int64_t expected_torchvision_params(const std::string& name);

// Problems with `g` as a zoo graph, one line each (empty = fine): nodes in
// topological order reading only defined values, unique node and value names,
// ops from the zoo's op set, every initializer read, input "input" [N,3,H,W]
// with symbolic "N", output "output" [N,classes], opset 13, IR version 8.
std::vector<std::string> structure_problems(const Graph& g);

}  // namespace frugal::zoo_test
