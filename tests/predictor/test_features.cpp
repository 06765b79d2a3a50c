// The features of docs/PREDICTOR.md against the formulas worked by hand for
// small convs whose geometry is known.
#include <catch2/catch.hpp>
#include <cmath>

#include "layer_facts.h"
#include "layer_features.h"
#include "predictor_util.h"
#include "zoo/graph_builder.h"

using namespace frugal;
using predictor::feature_names;

namespace {

double feature(const std::vector<double>& x, const std::string& name) {
  const auto& n = feature_names();
  const size_t i = size_t(std::find(n.begin(), n.end(), name) - n.begin());
  REQUIRE(i < n.size());
  return x[i];
}

// One conv: 4 -> 8 channels, 3x3, pad 1, on 10x10 (stride 1) or 8 -> 8 depthwise on 6x6.
Graph one_conv(bool depthwise) {
  zoo::GraphBuilder b(depthwise ? "dw" : "dense", 1);
  std::string x = depthwise ? b.input(8, 6, 6) : b.input(4, 10, 10);
  zoo::ConvOptions o;
  o.pad = 1;
  o.groups = depthwise ? 8 : 1;
  return b.finish(b.conv(x, "c", 8, 3, o));
}

}  // namespace

TEST_CASE("features of a dense conv equal perf4sight's formulas worked by hand", "[predictor][unit]") {
  const Graph g = one_conv(false);
  const nlohmann::json table = predictor_test::unmeasured(g, 2);
  const auto facts = predictor::layer_facts(g, table);
  REQUIRE(facts.size() == 1);
  const predictor::LayerFacts& f = facts[0];
  CHECK(f.family == "conv");
  CHECK(f.kind == "Conv (im2col + sgemm)");
  CHECK((f.n == 8 && f.m == 4 && f.kh == 3 && f.kw == 3 && f.ih == 10 && f.oh == 10 && f.groups == 1));
  const std::vector<double> x = predictor::features(f, 2, {"conv"}, {"Add", "Conv (im2col + sgemm)"});
  CHECK(feature(x, "family") == 0);
  CHECK(feature(x, "kind") == 1);
  CHECK(feature(x, "batch") == 2);
  CHECK(feature(x, "mem_w") == 8 * 4 * 9);
  CHECK(feature(x, "mem_ifm") == 2 * 4 * 100);
  CHECK(feature(x, "mem_ofm") == 2 * 8 * 100);
  CHECK(feature(x, "mem_i2c") == 2 * 100 * 9 * 4);
  CHECK(feature(x, "mem_i2c_index") == 2 * 100);
  CHECK(feature(x, "ops_mm") == 2 * 8 * 100 * 9 * 4);
  CHECK(feature(x, "mem_w_fft") == 8 * 4 * 10 * 11);
  CHECK(feature(x, "mem_ifm_fft") == 2 * 4 * 10 * 11);
  CHECK(feature(x, "ops_fft") == Approx(100 * std::log(10.0) * (2 * (4 + 8) + 32) + 2 * 8 * 4 * 100));
  CHECK(feature(x, "mem_wino") == 2 * 8 * 25 * 3 * 16);  // F(2x2, 3x3): 5x5 tiles of 4x4
  CHECK(feature(x, "ops_wino") == 2 * 8 * 4 * 25 * 1 * 16);
  CHECK(feature(x, "macs") == 2 * 8 * 4 * 9 * 100);  // the executor's count
  CHECK(feature(x, "in_bytes") == 2 * 4 * 100 * 4);
  CHECK(feature(x, "out_bytes") == 2 * 8 * 100 * 4);
  CHECK(feature(x, "weight_bytes") == 8 * 4 * 9 * 4);
  const double moved = 3200 + 6400 + feature(x, "ws_bytes") + 1152;
  CHECK(feature(x, "bytes_moved") == moved);
  CHECK(feature(x, "intensity") == Approx(57600 / moved));
  CHECK(feature(x, "work") == Approx(57600 + moved / 4));
  CHECK(feature(x, "threads") == 1);
  CHECK(feature(x, "gate_activity") == 1);
}

TEST_CASE("a depthwise conv: family, weights and operations per group", "[predictor][unit]") {
  const Graph g = one_conv(true);
  const auto facts = predictor::layer_facts(g, predictor_test::unmeasured(g, 1));
  REQUIRE(facts.size() == 1);
  CHECK(facts[0].family == "conv_depthwise");
  CHECK(facts[0].groups == 8);
  const std::vector<double> x = predictor::features(facts[0], 1, {"conv", "conv_depthwise"}, {facts[0].kind});
  CHECK(feature(x, "kind") == 0);
  CHECK(feature(x, "family") == 1);
  CHECK(feature(x, "mem_w") == 8 * 1 * 9);
  CHECK(feature(x, "ops_mm") == 8 * 36 * 9 * 1);
  CHECK(feature(x, "mem_i2c") == 36 * 9 * 8);
  CHECK(feature(x, "ops_wino") == 8 * 1 * 9 * 1 * 16);             // 3x3 tiles of the 6x6 input
  CHECK(predictor::features(facts[0], 1, {"conv"}, {})[0] == -1);  // a family training never saw
  CHECK(
      std::isnan(feature(predictor::features(facts[0], 1, {"conv_depthwise"}, {"Add"}), "kind")));  // missing
}

TEST_CASE("a pool's work counts its window operations", "[predictor][unit]") {
  // 3x3 max pool, stride 1, pad 1 on 4 x 6 x 6: 4 x 36 outputs, 9 comparisons each.
  zoo::GraphBuilder b("pool", 1);
  const Graph g = b.finish(b.maxpool(b.input(4, 6, 6), "p", 3, 1, 1));
  const auto facts = predictor::layer_facts(g, predictor_test::unmeasured(g, 2));
  REQUIRE(facts.size() == 1);
  CHECK(facts[0].family == "pool");
  CHECK(predictor::window_ops(facts[0], 2) == 2 * 4 * 36 * 9);
  const double moved = 2 * (4 * 36 * 4) * 2 + facts[0].ws_bytes[1];  // in and out, 2 samples
  CHECK(predictor::work(facts[0], 2) == Approx(2 * 4 * 36 * 9 + moved / 4));
  CHECK(predictor::window_ops(
            predictor::layer_facts(one_conv(false), predictor_test::unmeasured(one_conv(false), 1))[0], 1) ==
        0);
}

TEST_CASE("a conv with SiLU bundled is a family of its own", "[predictor][unit]") {
  zoo::GraphBuilder b("silu", 1);
  zoo::ConvOptions o;
  o.bias = true;
  const Graph g = b.finish(b.silu(b.conv(b.input(4, 6, 6), "c", 8, 1, o), "s"));
  const nlohmann::json table = predictor_test::unmeasured(g, 1);
  REQUIRE(table["layers"].size() == 1);  // the cpu executor bundles Sigmoid and Mul after the conv
  REQUIRE(table["layers"][0]["ops"] == nlohmann::json({"Conv", "Sigmoid", "Mul"}));
  CHECK(predictor::layer_facts(g, table)[0].family == "conv_1x1+exp");
}

TEST_CASE("layer_facts refuses a table without the executor's facts", "[predictor][unit]") {
  const Graph g = one_conv(false);
  nlohmann::json table = predictor_test::unmeasured(g, 1);
  table["layers"][0].erase("nodes");
  CHECK_THROWS_WITH(predictor::layer_facts(g, table), Catch::Contains("lacks the executor's facts"));
  table = predictor_test::unmeasured(g, 1);
  table["layers"][0]["nodes"][0] = "nope";
  CHECK_THROWS_WITH(predictor::layer_facts(g, table), Catch::Contains("the model has no node 'nope'"));
}
