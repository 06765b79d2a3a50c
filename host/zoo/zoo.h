// The model zoo: torchvision-layout CNNs (and small toys for tests) built in
// memory with deterministic random weights and realistic BatchNorm statistics,
// so that folding, profiling, planning and execution can be exercised without
// downloading anything.
//
// Every network has one input "input" [N,3,H,W] (N symbolic, named "N") and one
// output "output" [N,classes]. Big networks take 224x224 and give 1000 logits;
// toys are small (see zoo_names() and the comments in each toy's file).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "frugal/model/graph.h"

namespace frugal {

// The zoo's networks and toys, sorted.
std::vector<std::string> zoo_names();

// Networks built for the time predictor's training basis only (docs/PREDICTOR.md),
// sorted: gemm_ladder (Gemms of 0.5 to 176 MB of weights), mobilenet_v2_silu
// (mobilenet_v2 with SiLU for ReLU6). build_zoo_model builds them too; they are
// not in zoo_names(), which the tests and tools sweep as the zoo.
std::vector<std::string> zoo_training_names();

// Builds the named network (zoo_names() or zoo_training_names()). Same (name,
// seed) -> bit-identical graph. Throws frugal::Error listing the valid names
// when `name` is unknown.
Graph build_zoo_model(const std::string& name, uint64_t seed = 1);

// Parameters as torchvision counts them: conv/linear weights and biases, BN
// scale (gamma) and shift (beta); not BN running mean/var, not constant
// operands such as Clip bounds or Reshape shapes. Shared initializers count once.
int64_t torchvision_parameter_count(const Graph& g);

}  // namespace frugal
