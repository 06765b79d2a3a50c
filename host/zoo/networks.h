// One builder per zoo network (internal to host/zoo; users call build_zoo_model).
#pragma once

#include <cstdint>

#include "frugal/model/graph.h"

namespace frugal::zoo {

Graph build_resnet18(uint64_t seed);
Graph build_resnet50(uint64_t seed);
Graph build_alexnet(uint64_t seed);
Graph build_vgg16_bn(uint64_t seed);
Graph build_squeezenet1_0(uint64_t seed);
Graph build_squeezenet1_1(uint64_t seed);
Graph build_googlenet(uint64_t seed);
Graph build_mobilenet_v1(uint64_t seed);
Graph build_mobilenet_v2(uint64_t seed);
Graph build_mobilenet_v2_silu(uint64_t seed);
Graph build_efficientnet_b0(uint64_t seed);
Graph build_gemm_ladder(uint64_t seed);

Graph build_toy_tiny(uint64_t seed);
Graph build_toy_linear(uint64_t seed);
Graph build_toy_branched(uint64_t seed);
Graph build_toy_allops(uint64_t seed);

}  // namespace frugal::zoo
