// The refusals that exactness adds to the theorem, and the numerically delicate
// folds: MaxPool under a negative scale, negative and zero gamma, tiny
// variances, grouped and depthwise convs in both directions, Flatten before a
// Gemm, MatMul, average pooling that counts padding.
#include <catch2/catch.hpp>

#include "fold_check.h"
#include "folder/fold.h"
#include "zoo/graph_builder.h"

using namespace frugal;
using namespace frugal::fold_test;
using frugal::zoo::ConvOptions;
using frugal::zoo::GraphBuilder;

namespace {

bool mentions(const nlohmann::json& report, const std::string& bn, const std::string& text) {
  const std::string why = node_report(report, bn)["reason"];
  return why.find(text) != std::string::npos;
}

}  // namespace

TEST_CASE("conv -> MaxPool -> BN: folded with positive gamma, kept with a negative one", "[folder]") {
  for (bool negative : {false, true}) {
    GraphBuilder b("maxpool_bn", 41);
    std::string x = b.conv(b.input(3, 8, 8), "conv", 6, 3, conv_opts(1));
    x = b.relu(b.bn(b.maxpool(x, "pool", 3, 2, 1), "bn"), "relu");
    Graph g = b.finish(x);
    make_gamma_positive(g, "bn");
    if (negative) set_bn_param(g, "bn", "weight", 4, -0.8f);
    REQUIRE(theorem_foldable_count(g) == 1);  // the theorem does not look at signs
    FoldResult r = fold_banoff(g);
    if (!negative) {
      CHECK(r.report["bn_folded"] == 1);
      CHECK(node_report(r.report, "bn")["into"] == nlohmann::json::array({"conv"}));
      CHECK(relative_mismatch(g, r.graph) < kTolerance);
    } else {
      CHECK(r.report["bn_folded"] == 0);
      CHECK(mentions(r.report, "bn", "'pool' (MaxPool) sees a negative scale (a < 0 on feature 4)"));
    }
  }
}

TEST_CASE("negative gamma: backward before a ReLU and forward after one are exact", "[folder]") {
  GraphBuilder b("negative_gamma", 42);
  std::string x = b.input(3, 7, 7);
  x = b.relu(b.bn(b.conv(x, "conv1", 6, 3, conv_opts(1)), "bn1"), "relu1");
  x = b.conv(b.bn(x, "bn2"), "conv2", 5, 3, conv_opts(0));
  Graph g = b.finish(x);
  for (int64_t k : {0, 2, 5}) {
    set_bn_param(g, "bn1", "weight", k, -1.3f);
    set_bn_param(g, "bn2", "weight", k, -0.7f);
  }
  FoldResult r = fold_banoff(g);
  CHECK(r.report["bn_folded"] == 2);
  CHECK(node_report(r.report, "bn1")["direction"] == "backward");
  CHECK(node_report(r.report, "bn2")["direction"] == "forward");
  CHECK(relative_mismatch(g, r.graph) < kTolerance);
}

TEST_CASE("a zero-gamma channel folds into a producer but cannot be compensated", "[folder]") {
  // Plain backward fold: the channel's filter becomes 0 and its bias beta.
  GraphBuilder b("zero_gamma", 43);
  std::string x = b.input(3, 6, 6);
  Graph g = b.finish(b.relu(b.bn(b.conv(x, "conv", 4, 3, conv_opts(1, true)), "bn"), "relu"));
  set_bn_param(g, "bn", "weight", 1, 0.0f);
  FoldResult r = fold_banoff(g);
  CHECK(r.report["bn_folded"] == 1);
  CHECK(relative_mismatch(g, r.graph) < kTolerance);

  // With a second reader of the conv output, compensation would divide by a = 0.
  GraphBuilder b2("zero_gamma_comp", 43);
  std::string c = b2.conv(b2.input(3, 6, 6), "conv", 4, 3, conv_opts(1, true));
  std::string y = b2.relu(b2.bn(c, "bn"), "relu");
  Graph g2 = b2.finish(b2.add(y, b2.conv(c, "other", 4, 1, conv_opts(0)), "join"));
  set_bn_param(g2, "bn", "weight", 1, 0.0f);
  REQUIRE(theorem_foldable_count(g2) == 1);
  FoldResult r2 = fold_banoff(g2);
  CHECK(r2.report["bn_folded"] == 0);
  CHECK(mentions(r2.report, "bn", "consumer 'other' (Conv) cannot be compensated"));
  CHECK(mentions(r2.report, "bn", "gamma = 0"));
  // Without the zero it folds, compensating 'other'.
  set_bn_param(g2, "bn", "weight", 1, 0.5f);
  FoldResult r3 = fold_banoff(g2);
  CHECK(r3.report["bn_folded"] == 1);
  CHECK(relative_mismatch(g2, r3.graph) < kTolerance);
}

TEST_CASE("tiny variances with eps 1e-5 and 1e-3 fold exactly", "[folder]") {
  for (double eps : {1e-5, 1e-3}) {
    GraphBuilder b("tiny_var", 44);
    std::string x = b.input(3, 6, 6);
    x = b.relu(b.bn(b.conv(x, "conv1", 4, 3, conv_opts(1)), "bn1", eps), "relu");
    x = b.conv(b.bn(x, "bn2", eps), "conv2", 3, 1, conv_opts(0));
    Graph g = b.finish(x);
    for (int64_t k = 0; k < 4; ++k) {
      set_bn_param(g, "bn1", "running_var", k, k % 2 ? 1e-9f : 0.0f);
      set_bn_param(g, "bn2", "running_var", k, k % 2 ? 1e-7f : 0.0f);
    }
    FoldResult r = fold_banoff(g);
    CHECK(r.report["bn_folded"] == 2);
    CHECK(relative_mismatch(g, r.graph) < kTolerance);
  }
}

TEST_CASE("grouped (g = 2) and depthwise convs fold in both directions", "[folder]") {
  for (int64_t groups : {2, 6}) {  // 6 = depthwise on 6 channels
    INFO("groups " << groups);
    GraphBuilder b("grouped", 45);
    std::string x = b.relu(b.conv(b.input(3, 8, 8), "stem", 6, 3, conv_opts(1)), "relu0");
    x = b.relu(b.bn(b.conv(x, "g_back", 6, 3, conv_opts(1, false, groups)), "bn_back"), "relu1");  // backward
    x = b.conv(b.bn(x, "bn_fwd"), "g_fwd", 6, 3, conv_opts(0, true, groups));                      // forward
    Graph g = b.finish(b.relu(x, "relu2"));
    FoldResult r = fold_banoff(g);
    CHECK(r.report["bn_folded"] == 2);
    CHECK(node_report(r.report, "bn_back")["into"] == nlohmann::json::array({"g_back"}));
    CHECK(node_report(r.report, "bn_fwd")["into"] == nlohmann::json::array({"g_fwd"}));
    CHECK(relative_mismatch(g, r.graph) < kTolerance);
  }
}

TEST_CASE("BN -> Flatten -> Gemm folds forward: channel c is a block of H*W columns", "[folder]") {
  GraphBuilder b("flatten_gemm", 46);
  std::string x = b.relu(b.conv(b.input(3, 6, 6), "conv", 4, 3, conv_opts(0)), "relu");
  x = b.flatten(b.bn(x, "bn"), "flatten");
  Graph g = b.finish(b.gemm(x, "fc", 5));
  FoldResult r = fold_banoff(g);
  CHECK(r.report["bn_folded"] == 1);
  CHECK(node_report(r.report, "bn")["into"] == nlohmann::json::array({"fc"}));
  CHECK(relative_mismatch(g, r.graph) < kTolerance);

  // The same through a Reshape to [0, -1].
  GraphBuilder b2("reshape_gemm", 46);
  std::string x2 = b2.relu(b2.conv(b2.input(3, 6, 6), "conv", 4, 3, conv_opts(0)), "relu");
  x2 = b2.reshape(b2.bn(x2, "bn"), "reshape", {0, -1});
  Graph g2 = b2.finish(b2.gemm(x2, "fc", 5));
  FoldResult r2 = fold_banoff(g2);
  CHECK(r2.report["bn_folded"] == 1);
  CHECK(relative_mismatch(g2, r2.graph) < kTolerance);
}

TEST_CASE("MatMul absorbs a BN on either side (becoming a Gemm when it needs a bias)", "[folder]") {
  GraphBuilder b("matmul", 47);
  std::string x = b.flatten(b.input(2, 3, 3), "flatten");
  x = b.relu(b.bn(b.matmul(x, "mm1", 6), "bn1"), "relu");
  x = b.matmul(b.bn(x, "bn2"), "mm2", 4);
  Graph g = b.finish(x);
  FoldResult r = fold_banoff(g);
  CHECK(r.report["bn_folded"] == 2);
  CHECK(count_op(r.graph, "MatMul") == 0);
  CHECK(count_op(r.graph, "Gemm") == 2);
  CHECK(relative_mismatch(g, r.graph) < kTolerance);
}

TEST_CASE("average pooling that counts zero padding passes the scale only", "[folder]") {
  for (bool count_pad : {false, true}) {
    GraphBuilder b("avgpool", 48);
    std::string x = b.conv(b.input(3, 8, 8), "conv", 4, 3, conv_opts(1));
    x = b.relu(b.bn(b.avgpool(x, "pool", 3, 1, 1, count_pad), "bn"), "relu");
    Graph g = b.finish(x);
    FoldResult r = fold_banoff(g);
    if (!count_pad) {
      CHECK(r.report["bn_folded"] == 1);
      CHECK(relative_mismatch(g, r.graph) < kTolerance);
    } else {
      CHECK(r.report["bn_folded"] == 0);
      CHECK(mentions(r.report, "bn", "'pool' (AveragePool) averages zero padding"));
    }
  }
}

TEST_CASE("weights shared by two convs are cloned before one of them changes", "[folder]") {
  GraphBuilder b("shared", 49);
  std::string x = b.input(4, 6, 6);
  std::string a = b.relu(b.bn(b.conv(x, "convA", 4, 3, conv_opts(1)), "bn"), "reluA");
  std::string c = b.relu(b.conv(x, "convB", 4, 3, conv_opts(1)), "reluB");
  Graph g = b.finish(b.add(a, c, "join"));
  // convB reads convA's weight.
  Node& cb = g.nodes[g.node_index("convB")];
  cb.inputs[1] = "convA.weight";
  g.remove_unused_tensors();
  const std::vector<uint8_t> original = g.tensor("convA.weight").data;
  FoldResult r = fold_banoff(g);
  CHECK(r.report["bn_folded"] == 1);
  const Node& na = r.graph.nodes[r.graph.node_index("convA")];
  const Node& nb = r.graph.nodes[r.graph.node_index("convB")];
  CHECK(na.inputs[1] != nb.inputs[1]);
  CHECK(r.graph.tensor(nb.inputs[1]).data == original);
  CHECK(relative_mismatch(g, r.graph) < kTolerance);
}
