// The report, the refusals that no other fold can change (training mode,
// computed parameters), graphs with no BN or with ops the folder does not know,
// options, and the two plugins called through the C ABI with ONNX bytes.
#include <catch2/catch.hpp>
#include <cstring>

#include "fold_check.h"
#include "folder/fold.h"
#include "frugal/error.h"
#include "frugal/model/onnx_export.h"
#include "frugal/model/onnx_import.h"
#include "frugal/plugin.h"
#include "loader/folder_client.h"
#include "loader/plugin_registry.h"
#include "zoo/graph_builder.h"
#include "zoo/zoo.h"

using namespace frugal;
using namespace frugal::fold_test;
using frugal::zoo::ConvOptions;
using frugal::zoo::GraphBuilder;

namespace {

// conv -> BN -> ReLU -> BN -> conv: two foldable BNs.
Graph two_bn_chain() {
  GraphBuilder b("two_bn", 51);
  std::string x = b.input(3, 6, 6);
  x = b.relu(b.bn(b.conv(x, "conv1", 4, 3, conv_opts(1)), "bn1"), "relu");
  return b.finish(b.conv(b.bn(x, "bn2"), "conv2", 3, 1, conv_opts(0)));
}

}  // namespace

TEST_CASE("the report lists every BN with the fields the CLI prints", "[folder]") {
  Graph g = two_bn_chain();
  FoldResult r = fold_banoff(g);
  const nlohmann::json& rep = r.report;
  CHECK(rep["method"] == "banoff");
  CHECK(rep["bn_total"] == 2);
  CHECK(rep["bn_folded"] == 2);
  CHECK(rep["parameters_removed"] == g.parameter_count() - r.graph.parameter_count());
  // conv1 gains a bias (4), conv2 gains one (3); two BNs lose 4 x 4 each.
  CHECK(rep["parameters_removed"] == 2 * 16 - 4 - 3);
  REQUIRE(rep["nodes"].size() == 2);
  for (const auto& n : rep["nodes"]) {
    CHECK(n.contains("name"));
    CHECK(n["folded"] == true);
    CHECK(n["into"].is_array());
    CHECK(n["compensated"].is_array());
    CHECK(n["reason"].is_string());
  }
  CHECK(node_report(rep, "bn1")["reason"] == "folded backward into 'conv1'");
  CHECK(node_report(rep, "bn2")["reason"] == "folded forward into 'conv2'");
  CHECK(fold_naive(g).report["method"] == "naive");
}

TEST_CASE("a model with no BN comes back unchanged with a zero report", "[folder]") {
  Graph g = build_zoo_model("alexnet", 3);
  REQUIRE(count_op(g, "BatchNormalization") == 0);
  FoldResult r = fold_banoff(g);
  CHECK(r.report["bn_total"] == 0);
  CHECK(r.report["bn_folded"] == 0);
  CHECK(r.report["parameters_removed"] == 0);
  CHECK(save_onnx_bytes(r.graph) == save_onnx_bytes(g));
}

TEST_CASE("BN in training mode or with computed parameters is refused with the reason", "[folder]") {
  SECTION("training_mode = 1") {
    Graph g = two_bn_chain();
    g.nodes[g.node_index("bn1")].set_attr_int("training_mode", 1);
    FoldResult r = fold_banoff(g);
    CHECK(r.report["bn_folded"] == 1);
    CHECK(node_report(r.report, "bn1")["folded"] == false);
    CHECK(node_report(r.report, "bn1")["reason"].get<std::string>().find("training_mode=1") !=
          std::string::npos);
  }
  SECTION("running statistics as extra outputs") {
    Graph g = two_bn_chain();
    Node& bn = g.nodes[g.node_index("bn2")];
    bn.outputs.push_back("bn2.running_mean_out");
    bn.outputs.push_back("bn2.running_var_out");
    FoldResult r = fold_banoff(g);
    CHECK(node_report(r.report, "bn2")["folded"] == false);
    CHECK(node_report(r.report, "bn2")["reason"].get<std::string>().find("3 outputs") != std::string::npos);
  }
  SECTION("gamma computed by the graph") {
    Graph g = two_bn_chain();
    // gamma = Identity(constant): a value, not an initializer.
    Node id;
    id.name = "gamma_id";
    id.op_type = "Identity";
    id.inputs = {"bn1.weight"};
    id.outputs = {"gamma_computed"};
    g.nodes.insert(g.nodes.begin(), id);
    g.nodes[g.node_index("bn1")].inputs[1] = "gamma_computed";
    FoldResult r = fold_banoff(g);
    CHECK(node_report(r.report, "bn1")["folded"] == false);
    CHECK(node_report(r.report, "bn1")["reason"].get<std::string>().find(
              "'gamma_computed' is not a constant") != std::string::npos);
    CHECK(r.report["bn_folded"] == 1);
    CHECK(relative_mismatch(g, r.graph) < kTolerance);
  }
}

TEST_CASE("ops the folder does not know are boundaries; the rest still folds", "[folder]") {
  // Built with a ReLU, then the ReLU is relabelled as an unknown op for folding
  // (and back to ReLU in both graphs to evaluate them).
  GraphBuilder b("unknown", 52);
  std::string x = b.input(3, 6, 6);
  x = b.relu(b.bn(b.conv(x, "conv1", 4, 3, conv_opts(1)), "bn1"), "mystery");
  x = b.bn(x, "bn2");
  x = b.relu(x, "relu2");
  Graph g = b.finish(b.conv(b.bn(x, "bn3"), "conv2", 3, 1, conv_opts(0)));
  Graph unknown = g;
  unknown.nodes[unknown.node_index("mystery")].op_type = "MysteryOp";
  unknown.nodes[unknown.node_index("mystery")].domain = "com.example";
  FoldResult r = fold_banoff(unknown);
  CHECK(r.report["bn_total"] == 3);
  CHECK(r.report["bn_folded"] == 2);  // bn1 backward, bn3 forward; bn2 sits between two boundaries
  CHECK(node_report(r.report, "bn2")["reason"].get<std::string>().find("'mystery' (MysteryOp)") !=
        std::string::npos);
  Graph back = r.graph;
  Node& m = back.nodes[back.node_index("mystery")];
  REQUIRE(m.op_type == "MysteryOp");
  m.op_type = "Relu";
  m.domain = "";
  CHECK(relative_mismatch(g, back) < kTolerance);
}

TEST_CASE("options: directions can be switched off; bad options are errors", "[folder]") {
  Graph g = two_bn_chain();
  FoldOptions only_backward = parse_fold_options({{"allow_forward", false}});
  FoldResult r = fold_banoff(g, only_backward);
  CHECK(r.report["bn_folded"] == 1);
  CHECK(node_report(r.report, "bn2")["reason"].get<std::string>().find("not tried") != std::string::npos);
  CHECK_THROWS_AS(parse_fold_options({{"alow_forward", false}}), Error);
  CHECK_THROWS_WITH(parse_fold_options({{"max_branches", "many"}}), Catch::Contains("max_branches"));
  CHECK_THROWS_AS(parse_fold_options(nlohmann::json::array()), Error);
}

TEST_CASE("the banoff and naive plugins fold through the C ABI", "[folder]") {
  PluginRegistry registry;
  registry.scan_dirs({std::string(FRUGAL_TEST_BINARY_DIR) + "/plugins"});
  const LoadedPlugin* banoff = registry.find(FRUGAL_KIND_FOLDER, "banoff");
  const LoadedPlugin* naive = registry.find(FRUGAL_KIND_FOLDER, "naive");
  REQUIRE(banoff != nullptr);
  REQUIRE(naive != nullptr);

  Graph g = build_zoo_model("toy_branched", 5);
  FoldedModel ours = fold_model(*banoff, g);
  FoldResult direct = fold_banoff(g);
  CHECK(ours.report == direct.report);
  CHECK(count_op(ours.graph, "BatchNormalization") == count_op(direct.graph, "BatchNormalization"));
  CHECK(relative_mismatch(g, ours.graph) < kTolerance);
  CHECK(fold_model(*naive, g).report == fold_naive(g).report);

  // Bad input comes back as an error naming the problem, not a crash.
  const auto* api = static_cast<const frugal_folder_api*>(banoff->api);
  frugal_blob out{nullptr, 0, nullptr}, rep{nullptr, 0, nullptr};
  frugal_error err{};
  const char junk[] = "not an onnx model";
  CHECK(api->fold(junk, sizeof junk, nullptr, &out, &rep, &err) == FRUGAL_ERR_INVALID_ARGUMENT);
  CHECK(std::strlen(err.message) > 0);
  const std::string bytes = save_onnx_bytes(g);
  CHECK(api->fold(bytes.data(), bytes.size(), "{\"nope\":1}", &out, &rep, &err) ==
        FRUGAL_ERR_INVALID_ARGUMENT);
  CHECK(std::string(err.message).find("unknown folder option 'nope'") != std::string::npos);
  CHECK(api->fold(bytes.data(), bytes.size(), "{", &out, &rep, &err) == FRUGAL_ERR_INVALID_ARGUMENT);
  CHECK(out.data == nullptr);
}

TEST_CASE("a BN whose output nothing reads is removed", "[folder]") {
  GraphBuilder b("dead_bn", 53);
  std::string x = b.relu(b.conv(b.input(3, 5, 5), "conv", 4, 3, conv_opts(1)), "relu");
  b.bn(x, "dead");
  Graph g = b.finish(b.conv(x, "head", 2, 1, conv_opts(0)));
  FoldResult r = fold_banoff(g);
  CHECK(r.report["bn_folded"] == 1);
  CHECK(node_report(r.report, "dead")["reason"].get<std::string>().find("nothing reads its output") !=
        std::string::npos);
  CHECK_FALSE(r.graph.has_tensor("dead.weight"));
  CHECK(relative_mismatch(g, r.graph) < kTolerance);
}
