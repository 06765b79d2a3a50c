// Recognition of kernel gates (frugal/model/gating.h) and their insertion and
// calibration (frugal gate): the forms of docs/GATING.md are gated, each rule
// broken gives a near miss with its reason.
#include <catch2/catch.hpp>

#include "frugal/model/gating.h"
#include "gated_graphs.h"
#include "gating/gate_insert.h"
#include "zoo/zoo.h"

using Catch::Matchers::Contains;
using gate_test::gated_graph;
using gate_test::GatedGraphOptions;

namespace {

// The reason of the one near miss of `o`'s graph (and no gate).
std::string near_miss(const GatedGraphOptions& o) {
  const frugal::GateAnalysis a = frugal::find_gates(gated_graph(o));
  CHECK(a.gates.empty());
  REQUIRE(a.near_misses.size() == 1);
  CHECK(a.near_misses[0].mul == "gate_mul");
  return a.near_misses[0].reason;
}

}  // namespace

TEST_CASE("gating: both orders of pool and 1x1 conv are recognised, with consumers through MaxPool",
          "[gating]") {
  for (bool pool_first : {false, true}) {
    for (bool strict : {false, true}) {
      GatedGraphOptions o;
      o.pool_first = pool_first;
      o.strict = strict;
      o.threshold = 0.25f;
      const frugal::GateAnalysis a = frugal::find_gates(gated_graph(o));
      CHECK(a.near_misses.empty());
      REQUIRE(a.gates.size() == 1);
      const frugal::GateMatch& m = a.gates[0];
      CHECK(m.mul == "gate_mul");
      CHECK(m.conv == "conv1");
      CHECK(m.input == "x");
      CHECK(m.between == std::vector<std::string>{"bn1", "relu1"});
      CHECK(m.gate_conv == "g_conv");
      CHECK(m.gate_nodes.size() == 5);
      CHECK(m.pool_first == pool_first);
      CHECK(m.strict == strict);
      CHECK(m.threshold == 0.25f);
      CHECK(m.channels == 8);
      CHECK(m.input_channels == 6);
      CHECK(m.consumers == std::vector<std::string>{"conv2"});
      CHECK(a.by_conv("conv1") == &m);
      CHECK(a.by_mul("gate_mul") == &m);
    }
  }
}

TEST_CASE("gating: near misses name the rule they break", "[gating]") {
  GatedGraphOptions o;
  o.soft = true;
  CHECK_THAT(near_miss(o), Contains("soft gate"));
  o = {};
  o.threshold = 1.5f;
  CHECK_THAT(near_miss(o), Contains("threshold 1.5") && Contains("outside [0, 1]"));
  o = {};
  o.threshold = -0.5f;
  CHECK_THAT(near_miss(o), Contains("outside [0, 1]"));
  o = {};
  o.gate_channels = 4;
  CHECK_THAT(near_miss(o), Contains("the gate has 4 channels but Conv node 'conv1' has 8"));
  o = {};
  o.mul_before_bn = true;
  CHECK_THAT(near_miss(o), Contains("BatchNormalization node 'bn1', which does not keep 0 at 0"));
  o = {};
  o.add_after = true;
  CHECK_THAT(near_miss(o), Contains("Add node 'add', which does not keep 0 at 0"));
  o = {};
  o.gate_reads_other = true;
  CHECK_THAT(near_miss(o), Contains("the gate reads 'x_relu' but the gated Conv node 'conv1' reads 'x'"));
}

TEST_CASE("gating: a gate value read elsewhere or a Cast to another type is a near miss", "[gating]") {
  frugal::Graph g = gated_graph();
  g.outputs.push_back("g_sw");  // the switch values escape
  frugal::GateAnalysis a = frugal::find_gates(g);
  REQUIRE(a.near_misses.size() == 1);
  CHECK_THAT(a.near_misses[0].reason, Contains("'g_sw'") && Contains("also read by the graph's outputs"));
  g = gated_graph();
  for (frugal::Node& n : g.nodes)
    if (n.op_type == "Cast") n.set_attr_int("to", 11);
  a = frugal::find_gates(g);
  REQUIRE(a.near_misses.size() == 1);
  CHECK_THAT(a.near_misses[0].reason, Contains("not float"));
}

TEST_CASE("gating: dense zoo networks have neither gates nor near misses", "[gating]") {
  for (const char* name : {"resnet18", "mobilenet_v2", "efficientnet_b0", "squeezenet1_1"}) {
    INFO(name);
    const frugal::GateAnalysis a = frugal::find_gates(frugal::build_zoo_model(name, 1));
    CHECK(a.gates.empty());
    CHECK(a.near_misses.empty());  // efficientnet's squeeze-excite is not a gate
  }
}

TEST_CASE("gating: sites and insertion on resnet18: first convs of blocks, not those before an Add",
          "[gating]") {
  const frugal::Graph dense = frugal::build_zoo_model("resnet18", 1);
  std::vector<std::string> ok;
  for (const frugal::GateSite& s : frugal::gate_sites(dense)) {
    if (s.reason.empty()) ok.push_back(s.conv);
    if (s.conv == "layer1.0.conv2") CHECK_THAT(s.reason, Contains("Add node 'layer1.0.add'"));
  }
  CHECK(ok == std::vector<std::string>{"layer1.0.conv1", "layer1.1.conv1", "layer2.0.conv1", "layer2.1.conv1",
                                       "layer3.0.conv1", "layer3.1.conv1", "layer4.0.conv1",
                                       "layer4.1.conv1"});
  frugal::Graph g = dense;
  const auto gates = frugal::insert_gates(g, {"layer2.0.conv1", "layer1.0.conv1"}, 7, 0.5f);
  REQUIRE(gates.size() == 2);
  const frugal::GateAnalysis a = frugal::find_gates(g);
  CHECK(a.near_misses.empty());
  REQUIRE(a.gates.size() == 2);
  CHECK(a.gates[0].conv == "layer1.0.conv1");  // graph order
  CHECK(a.gates[0].pool_first);
  CHECK(a.gates[0].consumers == std::vector<std::string>{"layer1.0.conv2"});
  CHECK(g.outputs == dense.outputs);
  frugal::Graph bad = dense;
  CHECK_THROWS_WITH(frugal::insert_gates(bad, {"layer1.0.conv2"}, 7, 0.5f),
                    Contains("Conv node 'layer1.0.conv2' cannot be gated") && Contains("Add"));
  CHECK_THROWS_WITH(frugal::insert_gates(bad, {"nope"}, 7, 0.5f), Contains("no Conv node named 'nope'"));
  CHECK_THROWS_WITH(frugal::insert_gates(bad, {"layer1.0.conv1"}, 7, 1.5f), Contains("outside [0, 1]"));
}

TEST_CASE("gating: calibration puts the cut halfway between the values around it", "[gating]") {
  frugal::Graph g = frugal::build_zoo_model("resnet18", 1);
  const auto gates = frugal::insert_gates(g, {"layer1.0.conv1"}, 7, 0.5f);
  std::vector<float> z;
  for (int i = 0; i < 64 * 4; ++i) z.push_back(float((i * 37) % 256) / 16.0f - 3.0f);  // a permutation
  for (double activity : {0.0, 0.1, 0.25, 0.5, 1.0}) {
    frugal::Graph h = g;
    const float b0 = h.tensor(gates[0].bias).f32()[5];
    const double reached = frugal::calibrate_gate(h, gates[0], z, activity, 0.5f);
    CHECK(reached == Approx(std::round(activity * 256) / 256));
    const float shift = h.tensor(gates[0].bias).f32()[5] - b0;
    // On iff z + shift >= logit(0.5) = 0, with every value at least half a step (1/32) away.
    size_t on = 0;
    for (float v : z) {
      CHECK(std::abs(v + shift) >= 1.0f / 32 - 1e-5f);
      on += v + shift >= 0;
    }
    CHECK(on == size_t(std::lround(activity * 256)));
  }
  CHECK_THROWS_WITH(frugal::calibrate_gate(g, gates[0], z, 0.5, 0.0f), Contains("inside (0, 1)"));
}
