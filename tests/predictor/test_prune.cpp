// The zoo's channel pruning: which convs shrink, by how much, and that the
// pruned network still runs (its shapes agree) with fewer MACs.
#include <catch2/catch.hpp>

#include "frugal/error.h"
#include "frugal/model/macs.h"
#include "loader/executor_client.h"
#include "predictor_util.h"
#include "zoo/prune_channels.h"
#include "zoo/zoo.h"

using namespace frugal;

namespace {

int64_t filters(const Graph& g, const std::string& conv) {
  return g.tensor(g.nodes[size_t(g.node_index(conv))].inputs[1]).shape[0].value;
}

int64_t in_channels(const Graph& g, const std::string& conv) {
  return g.tensor(g.nodes[size_t(g.node_index(conv))].inputs[1]).shape[1].value;
}

}  // namespace

TEST_CASE("prune_channels: convs inside blocks shrink, those feeding an Add or Concat do not",
          "[predictor][unit]") {
  const Graph r = prune_channels(build_zoo_model("resnet18"), 0.3);
  CHECK(filters(r, "layer1.0.conv1") == 45);  // round(64 x 0.7) = 44.8
  CHECK(in_channels(r, "layer1.0.conv2") == 45);
  CHECK(filters(r, "layer1.0.conv2") == 64);   // feeds the residual Add
  CHECK(filters(r, "conv1") == 64);            // its output is added to later
  CHECK(filters(r, "layer4.1.conv1") == 358);  // round(512 x 0.7) = 358.4

  // mobilenet_v2: the expansion conv and the depthwise conv after it shrink together.
  const Graph m = prune_channels(build_zoo_model("mobilenet_v2"), 0.5);
  const Node& dw = m.nodes[size_t(m.node_index("features.2.conv.1.0"))];
  CHECK(filters(m, "features.2.conv.0.0") == 48);  // 96 / 2
  CHECK(dw.attr_int("group", 0) == 48);
  CHECK(in_channels(m, "features.2.conv.2") == 48);

  CHECK_THROWS_WITH(prune_channels(r, 1.0), Catch::Contains("must be in [0, 1)"));
}

TEST_CASE("a pruned network runs on the CPU executor with fewer MACs", "[predictor][unit]") {
  for (const std::string name : {"resnet18", "mobilenet_v2", "squeezenet1_1"}) {
    INFO(name);
    const Graph full = build_zoo_model(name), half = prune_channels(full, 0.5);
    const nlohmann::json a = predictor_test::unmeasured(full, 1), b = predictor_test::unmeasured(half, 1);
    double macs_a = 0, macs_b = 0;
    for (const auto& l : a["layers"]) macs_a += l["macs_per_sample"].get<double>();
    for (const auto& l : b["layers"]) macs_b += l["macs_per_sample"].get<double>();
    CHECK(b["layers"].size() == a["layers"].size());
    CHECK(macs_b < 0.8 * macs_a);
  }
}
