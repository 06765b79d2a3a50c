// MAC totals of the zoo networks against the published figures: torchvision's
// weight metadata ("_ops", GFLOPS counted as multiply-accumulates of convs and
// linear layers, 3 decimals) and the MobileNet v1 paper (569 million mult-adds).
// Cross-checks the MAC counter and shape inference on whole networks.
#pragma once

#include <catch2/catch.hpp>
#include <cmath>

#include "frugal/model/macs.h"
#include "frugal/model/shape_inference.h"
#include "zoo/zoo.h"

namespace frugal::test {

inline double total_gmacs(const std::string& name) {
  frugal::Graph g = frugal::build_zoo_model(name, 1);
  frugal::infer_shapes_for_batch(g, 1);
  int64_t macs = 0;
  for (const frugal::Node& n : g.nodes) macs += frugal::node_macs(g, n);
  return static_cast<double>(macs) / 1e9;
}

inline void check_published(const std::string& name, double published_gmacs) {
  INFO(name);
  CHECK(std::abs(total_gmacs(name) - published_gmacs) <= 0.0005);  // published to 3 decimals
}

}  // namespace frugal::test
