// Folding through Resize, Upsample, Pad and GlobalMaxPool, numerically: the
// folder's conditions (nearest mode with batch and channel axes unchanged;
// reflect/edge Pad commute, zero Pad passes the scale only; max needs a
// non-negative scale) checked on graphs where they hold and where they do not,
// and every fold evaluated against the original with the float64 reference.
#include <catch2/catch.hpp>

#include "fold_check.h"
#include "folder/affine_ops.h"
#include "folder/feature_shapes.h"
#include "folder/fold.h"
#include "zoo/graph_builder.h"

using namespace frugal;
using namespace frugal::fold_test;
using frugal::zoo::GraphBuilder;

namespace {

std::string add_floats(Graph& g, const std::string& name, const std::vector<float>& v) {
  g.add_initializer(name, DType::Float32, {static_cast<int64_t>(v.size())}, v.data());
  return name;
}

void set_string(Node& n, const std::string& name, const std::string& value) {
  Attribute a;
  a.name = name;
  a.kind = Attribute::Kind::String;
  a.s = value;
  n.attributes.push_back(a);
}

std::string add_ints(Graph& g, const std::string& name, const std::vector<int64_t>& v) {
  g.add_initializer(name, DType::Int64, {static_cast<int64_t>(v.size())}, v.data());
  return name;
}

// input [N,3,6,6] -> conv(4, pad 1) -> SLOT -> BN -> Relu -> conv(2) (the
// BN's map can only go backward, across SLOT into the first conv), or with
// `forward` input [N,4,6,6] -> BN -> SLOT -> conv(2) (only forward, across SLOT
// into the 1x1 head). SLOT is an
// Identity named "slot" that `shape` turns into the op under test. Declared
// shapes after the input are dropped (the op may change the spatial size).
template <class Shape>
Graph graph_with(uint64_t seed, Shape shape, bool forward = false) {
  GraphBuilder b("resample", seed);
  std::string x =
      forward ? b.bn(b.input(4, 6, 6), "bn") : b.conv(b.input(3, 6, 6), "conv", 4, 3, conv_opts(1, true));
  x = b.identity(x, "slot");
  if (!forward) x = b.relu(b.bn(x, "bn"), "relu");
  Graph g = b.finish(b.conv(x, "head", 2, 1, conv_opts(0, true)));
  Node& slot = g.nodes[g.node_index("slot")];
  shape(g, slot);
  for (auto& kv : g.tensors)
    if (!kv.second.is_initializer && kv.first != g.inputs[0]) {
      kv.second.has_shape = false;
      kv.second.shape.clear();
    }
  return g;
}

void resize_scales(Graph& g, Node& n, const std::string& mode, std::vector<float> scales) {
  n.op_type = "Resize";
  n.inputs = {n.inputs[0], "", add_floats(g, "scales", scales)};
  set_string(n, "mode", mode);
}

// Folds; CHECKs the count, the reason when refused, and exactness either way.
void check_fold(const Graph& g, int expected, const std::string& reason_part = "") {
  const FoldResult r = fold_banoff(g);
  INFO(r.report.dump(1));
  CHECK(r.report["bn_folded"] == expected);
  if (!reason_part.empty())
    CHECK(node_report(r.report, "bn")["reason"].get<std::string>().find(reason_part) != std::string::npos);
  CHECK(relative_mismatch(g, r.graph) < kTolerance);
}

}  // namespace

TEST_CASE("nearest Resize and Upsample pass the map when batch and channels keep their sizes", "[folder]") {
  SECTION("Resize with scales [1,1,2,2]") {
    check_fold(graph_with(1, [](Graph& g, Node& n) { resize_scales(g, n, "nearest", {1, 1, 2, 2}); }), 1);
  }
  SECTION("Resize with sizes, asymmetric coordinates") {
    check_fold(graph_with(2,
                          [](Graph& g, Node& n) {
                            n.op_type = "Resize";
                            n.inputs = {n.inputs[0], "", "", add_ints(g, "sizes", {1, 4, 9, 4})};
                            set_string(n, "coordinate_transformation_mode", "asymmetric");
                          }),
               1);
  }
  SECTION("Upsample (opset 9 form: scales as input 1)") {
    check_fold(graph_with(3,
                          [](Graph& g, Node& n) {
                            n.op_type = "Upsample";
                            n.inputs = {n.inputs[0], add_floats(g, "scales", {1, 1, 2, 3})};
                          }),
               1);
  }
  SECTION("forward, into the reader after the Resize") {
    check_fold(graph_with(
                   4,
                   [](Graph& g, Node& n) {
                     resize_scales(g, n, "nearest", {1, 1, 0.5f, 0.5f});
                   },
                   true),
               1);
  }
}

TEST_CASE("Resize that interpolates or changes the channels is a boundary, with the reason", "[folder]") {
  SECTION("linear") {
    Graph g = graph_with(5, [](Graph& g, Node& n) { resize_scales(g, n, "linear", {1, 1, 2, 2}); });
    const FoldResult r = fold_banoff(g);
    CHECK(r.report["bn_folded"] == 0);
    CHECK(node_report(r.report, "bn")["reason"].get<std::string>().find("interpolates") != std::string::npos);
  }
  SECTION("channel scale 2, or sizes that change the channels") {
    // (A graph around it would not type-check: the op table's verdict alone.)
    Graph g = graph_with(6, [](Graph& g, Node& n) { resize_scales(g, n, "nearest", {1, 2, 1, 1}); });
    const folding::ShapeMap shapes = folding::infer_feature_shapes(g);
    const folding::OpInteraction c = folding::classify(g, g.nodes[g.node_index("slot")], shapes);
    CHECK(c.kind == folding::Interaction::NonAffine);
    CHECK(c.why.find("resizes the batch or channel axis (scales=[1,2,1,1])") != std::string::npos);
    Node& n = g.nodes[g.node_index("slot")];
    n.inputs = {n.inputs[0], "", "", add_ints(g, "sizes", {1, 8, 6, 6})};
    const folding::OpInteraction d = folding::classify(g, n, shapes);
    CHECK(d.kind == folding::Interaction::NonAffine);
    CHECK(d.why.find("resizes the batch or channel axis (sizes=[1,8,6,6])") != std::string::npos);
  }
  SECTION("scales computed at run time") {
    Graph g = graph_with(7, [](Graph& g, Node& n) { resize_scales(g, n, "nearest", {1, 1, 2, 2}); });
    g.inputs.push_back("scales");  // now a graph input, not a constant
    g.tensors["scales"].is_initializer = false;
    const FoldResult r = fold_banoff(g);
    CHECK(r.report["bn_folded"] == 0);
  }
}

TEST_CASE("Pad: reflect and edge pass the map, zeros the scale only, channel padding never", "[folder]") {
  auto pad = [](const std::string& mode, std::vector<int64_t> pads) {
    return [mode, pads](Graph& g, Node& n) {
      n.op_type = "Pad";
      n.inputs = {n.inputs[0], add_ints(g, "pads", pads)};
      set_string(n, "mode", mode);
    };
  };
  SECTION("reflect") { check_fold(graph_with(8, pad("reflect", {0, 0, 1, 2, 0, 0, 2, 1})), 1); }
  SECTION("edge") { check_fold(graph_with(9, pad("edge", {0, 0, 1, 1, 0, 0, 1, 1})), 1); }
  SECTION("zeros, with a shift: refused") {
    check_fold(graph_with(10, pad("constant", {0, 0, 1, 1, 0, 0, 1, 1})), 0, "pads with zeros");
  }
  SECTION("zeros, shift-free BN: folds") {
    Graph g = graph_with(11, pad("constant", {0, 0, 1, 1, 0, 0, 1, 1}));
    for (int64_t k = 0; k < 4; ++k) {
      set_bn_param(g, "bn", "bias", k, 0.0f);
      set_bn_param(g, "bn", "running_mean", k, 0.0f);
    }
    check_fold(g, 1);
  }
  SECTION("padding the channel axis: refused (the op table's verdict)") {
    Graph g = graph_with(12, pad("edge", {0, 1, 0, 0, 0, 0, 0, 0}));
    const folding::OpInteraction c =
        folding::classify(g, g.nodes[g.node_index("slot")], folding::infer_feature_shapes(g));
    CHECK(c.kind == folding::Interaction::NonAffine);
    CHECK(c.why.find("pads the batch or channel axis") != std::string::npos);
  }
}

TEST_CASE("GlobalMaxPool passes a non-negative scale only", "[folder]") {
  auto gmp = [](Graph&, Node& n) { n.op_type = "GlobalMaxPool"; };
  Graph g = graph_with(13, gmp);
  make_gamma_positive(g, "bn");
  check_fold(g, 1);
  set_bn_param(g, "bn", "weight", 2, -0.5f);
  check_fold(g, 0, "negative scale");
}
