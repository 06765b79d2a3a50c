// Folding on small chains: backward into a producer, forward into a consumer,
// and the BNs that must stay. Every case checks the exact count (against the
// theorem and, where exactness refuses, against the reason) and that the folded
// graph computes what the original does (float64 reference, random inputs).
#include <catch2/catch.hpp>

#include "fold_check.h"
#include "folder/fold.h"
#include "zoo/graph_builder.h"

using namespace frugal;
using namespace frugal::fold_test;
using frugal::zoo::ConvOptions;
using frugal::zoo::GraphBuilder;

TEST_CASE("conv -> BN folds backward into the conv, with and without a bias", "[folder]") {
  for (bool bias : {false, true}) {
    GraphBuilder b("conv_bn", 11);
    std::string x = b.input(3, 9, 9);
    x = b.bn(b.conv(x, "conv", 6, 3, conv_opts(1, bias)), "bn");
    Graph g = b.finish(b.conv(x, "head", 4, 1, conv_opts(0, true)));
    REQUIRE(theorem_foldable_count(g) == 1);

    FoldResult r = fold_banoff(g);
    CHECK(r.report["bn_total"] == 1);
    CHECK(r.report["bn_folded"] == 1);
    const auto& n = node_report(r.report, "bn");
    CHECK(n["direction"] == "backward");
    CHECK(n["into"] == nlohmann::json::array({"conv"}));
    CHECK(count_op(r.graph, "BatchNormalization") == 0);
    // The conv now has a bias either way; the BN's four vectors are gone.
    const Node& conv = r.graph.nodes[r.graph.node_index("conv")];
    REQUIRE(conv.inputs.size() == 3);
    CHECK_FALSE(r.graph.has_tensor("bn.running_var"));
    CHECK(r.report["parameters_removed"] == (bias ? 4 * 6 : 3 * 6));
    CHECK(r.graph.outputs == g.outputs);
    CHECK(relative_mismatch(g, r.graph) < kTolerance);
  }
}

TEST_CASE("conv -> BN -> ReLU folds backward; naive folds it too", "[folder]") {
  GraphBuilder b("conv_bn_relu", 12);
  std::string x = b.input(3, 8, 8);
  x = b.relu(b.bn(b.conv(x, "conv", 5, 3, conv_opts(1)), "bn"), "relu");
  Graph g = b.finish(x);
  REQUIRE(theorem_foldable_count(g) == 1);
  for (FoldResult r : {fold_banoff(g), fold_naive(g)}) {
    CHECK(r.report["bn_folded"] == 1);
    CHECK(node_report(r.report, "bn")["direction"] == "backward");
    CHECK(relative_mismatch(g, r.graph) < kTolerance);
  }
}

TEST_CASE("Gemm -> BN (1-D BN on [N, F]) folds backward into the Gemm", "[folder]") {
  GraphBuilder b("gemm_bn", 13);
  std::string x = b.input(3, 4, 4);
  x = b.flatten(x, "flatten");
  x = b.bn(b.gemm(x, "fc", 7), "bn");
  Graph g = b.finish(b.relu(x, "relu"));
  REQUIRE(theorem_foldable_count(g) == 1);
  FoldResult r = fold_banoff(g);
  CHECK(r.report["bn_folded"] == 1);
  CHECK(node_report(r.report, "bn")["into"] == nlohmann::json::array({"fc"}));
  CHECK(relative_mismatch(g, r.graph) < kTolerance);
}

TEST_CASE("ReLU -> BN -> conv: folded forward with pad 0, kept with pad 1", "[folder]") {
  for (int64_t pad : {0, 1}) {
    GraphBuilder b("relu_bn_conv", 14);
    std::string x = b.input(3, 8, 8);
    x = b.relu(b.conv(x, "conv1", 6, 3, conv_opts(1)), "relu");
    x = b.bn(x, "bn");
    Graph g = b.finish(b.conv(x, "conv2", 4, 3, conv_opts(pad)));
    // The theorem (which ignores padding) says foldable in both cases.
    REQUIRE(theorem_foldable_count(g) == 1);

    FoldResult r = fold_banoff(g);
    const auto& n = node_report(r.report, "bn");
    if (pad == 0) {
      CHECK(r.report["bn_folded"] == 1);
      CHECK(n["direction"] == "forward");
      CHECK(n["into"] == nlohmann::json::array({"conv2"}));
      CHECK(relative_mismatch(g, r.graph) < kTolerance);
    } else {
      CHECK(r.report["bn_folded"] == 0);
      const std::string why = n["reason"];
      CHECK(why.find("'conv2' (Conv) pads its input (pads=[1,1,1,1])") != std::string::npos);
      CHECK(why.find("'relu' (Relu)") != std::string::npos);
      CHECK(r.graph.nodes.size() == g.nodes.size());  // handed back unchanged
    }
  }
}

TEST_CASE("ReLU -> BN -> conv (pad 1) folds when the shift c is exactly 0", "[folder]") {
  // Forward folding a padded consumer is exact where c = beta - a*mean = 0.
  GraphBuilder b("zero_shift", 15);
  std::string x = b.input(3, 6, 6);
  x = b.bn(b.relu(b.conv(x, "conv1", 4, 3, conv_opts(1)), "relu"), "bn");
  Graph g = b.finish(b.conv(x, "conv2", 3, 3, conv_opts(1)));
  for (int64_t k = 0; k < 4; ++k) {
    set_bn_param(g, "bn", "bias", k, 0.0f);
    set_bn_param(g, "bn", "running_mean", k, 0.0f);
  }
  FoldResult r = fold_banoff(g);
  CHECK(r.report["bn_folded"] == 1);
  CHECK(node_report(r.report, "bn")["direction"] == "forward");
  CHECK(relative_mismatch(g, r.graph) < kTolerance);
}

TEST_CASE("graph input -> BN -> conv folds forward", "[folder]") {
  GraphBuilder b("input_bn_conv", 16);
  std::string x = b.bn(b.input(3, 7, 7), "bn");
  Graph g = b.finish(b.relu(b.conv(x, "conv", 5, 3, conv_opts(0, true)), "relu"));
  REQUIRE(theorem_foldable_count(g) == 1);
  FoldResult r = fold_banoff(g);
  CHECK(r.report["bn_folded"] == 1);
  CHECK(node_report(r.report, "bn")["direction"] == "forward");
  CHECK(r.graph.inputs == g.inputs);
  CHECK(relative_mismatch(g, r.graph) < kTolerance);
  CHECK(fold_naive(g).report["bn_folded"] == 1);
}

TEST_CASE("a BN between two ReLUs has no expressive neighbour and stays", "[folder]") {
  GraphBuilder b("isolated", 17);
  std::string x = b.input(3, 6, 6);
  x = b.relu(b.conv(x, "conv", 4, 3, conv_opts(1)), "relu1");
  x = b.relu(b.bn(x, "bn"), "relu2");
  Graph g = b.finish(b.conv(x, "head", 2, 1, conv_opts(0)));
  REQUIRE(theorem_foldable_count(g) == 0);
  FoldResult r = fold_banoff(g);
  CHECK(r.report["bn_folded"] == 0);
  const std::string why = node_report(r.report, "bn")["reason"];
  CHECK(why.find("backward side reaches 'relu1' (Relu)") != std::string::npos);
  CHECK(why.find("forward side reaches 'relu2' (Relu)") != std::string::npos);
  CHECK(r.graph.nodes.size() == g.nodes.size());
}

TEST_CASE("a BN whose output is a graph output folds only backward", "[folder]") {
  GraphBuilder b("bn_output", 18);
  std::string x = b.input(3, 5, 5);
  Graph g = b.finish(b.bn(b.conv(x, "conv", 4, 3, conv_opts(1)), "bn"));
  FoldResult r = fold_banoff(g);
  CHECK(r.report["bn_folded"] == 1);
  CHECK(r.graph.outputs == std::vector<std::string>{"output"});
  CHECK(r.graph.producer("output") == r.graph.node_index("conv"));
  CHECK(relative_mismatch(g, r.graph) < kTolerance);

  GraphBuilder b2("input_bn_output", 18);
  Graph g2 = b2.finish(b2.bn(b2.input(3, 5, 5), "bn"));
  FoldResult r2 = fold_banoff(g2);
  CHECK(r2.report["bn_folded"] == 0);
  const std::string why = node_report(r2.report, "bn")["reason"];
  CHECK(why.find("graph input 'input'") != std::string::npos);
  CHECK(why.find("graph output 'output'") != std::string::npos);
}
