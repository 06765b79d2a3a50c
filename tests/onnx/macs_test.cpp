// MAC counts: hand-computed values and a brute-force count over a conv's
// output positions and kernel taps.
#include "frugal/model/macs.h"

#include <catch2/catch.hpp>

#include "frugal/model/onnx_import.h"
#include "frugal/model/shape_inference.h"
#include "graph_fixtures.h"
#include "test_models.h"

using namespace frugal;
using namespace frugal::test;

namespace {

// One MAC per (output element, input channel of its group, kernel tap), padded taps included.
int64_t brute_force_conv_macs(int64_t n, int64_t c, int64_t m, int64_t group, int64_t oh, int64_t ow,
                              int64_t kh, int64_t kw) {
  int64_t macs = 0;
  for (int64_t b = 0; b < n; ++b)
    for (int64_t o = 0; o < m; ++o)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x)
          for (int64_t ci = 0; ci < c / group; ++ci)
            for (int64_t i = 0; i < kh; ++i)
              for (int64_t j = 0; j < kw; ++j) ++macs;
  return macs;
}

}  // namespace

TEST_CASE("Conv MACs with groups and stride", "[onnx][macs]") {
  GraphFixture f;
  f.input("x", {2, 8, 10, 10}).weight("w", {16, 4, 3, 3}).weight("b", {16});
  Node& n = f.node("Conv", "conv", {"x", "w", "b"}, {"y"});
  n.set_attr_int("group", 2);
  n.set_attr_ints("strides", {2, 2});
  n.set_attr_ints("pads", {1, 1, 1, 1});
  infer_shapes(f.g, {});
  REQUIRE(f.dims("y") == std::vector<int64_t>{2, 16, 5, 5});
  // 2 images * 16 filters * 25 positions * (8/2 channels * 9 taps)
  CHECK(node_macs(f.g, f.g.nodes[0]) == 2 * 16 * 25 * 4 * 9);
  CHECK(node_macs(f.g, f.g.nodes[0]) == brute_force_conv_macs(2, 8, 16, 2, 5, 5, 3, 3));
}

TEST_CASE("depthwise and 1x1 Conv MACs", "[onnx][macs]") {
  GraphFixture f;
  f.input("x", {1, 32, 14, 14}).weight("dw", {32, 1, 3, 3}).weight("pw", {64, 32, 1, 1});
  Node& d = f.node("Conv", "dw", {"x", "dw"}, {"y"});
  d.set_attr_int("group", 32);
  d.set_attr_ints("pads", {1, 1, 1, 1});
  f.node("Conv", "pw", {"y", "pw"}, {"z"});
  infer_shapes(f.g, {});
  CHECK(node_macs(f.g, f.g.nodes[0]) == 32 * 14 * 14 * 9);
  CHECK(node_macs(f.g, f.g.nodes[1]) == 64 * 14 * 14 * 32);
  CHECK(node_macs(f.g, f.g.nodes[0]) == brute_force_conv_macs(1, 32, 32, 32, 14, 14, 3, 3));
}

TEST_CASE("Gemm and MatMul MACs", "[onnx][macs]") {
  GraphFixture f;
  f.input("a", {6, 4}).weight("b", {5, 6}).weight("c", {5});
  Node& g = f.node("Gemm", "fc", {"a", "b", "c"}, {"y"});  // A^T: M=4, K=6; B^T: N=5
  g.set_attr_int("transA", 1);
  g.set_attr_int("transB", 1);
  f.input("p", {2, 1, 3, 4}).input("q", {5, 4, 7}).input("v", {4});
  f.node("MatMul", "bmm", {"p", "q"}, {"pq"});
  f.node("MatMul", "mv", {"p", "v"}, {"pv"});
  f.node("Relu", "relu", {"pq"}, {"r"});
  infer_shapes(f.g, {});
  CHECK(node_macs(f.g, f.g.nodes[0]) == 4 * 5 * 6);
  CHECK(f.dims("pq") == std::vector<int64_t>{2, 5, 3, 7});
  CHECK(node_macs(f.g, f.g.nodes[1]) == 2 * 5 * 3 * 7 * 4);
  CHECK(node_macs(f.g, f.g.nodes[2]) == 2 * 1 * 3 * 4);
  CHECK(node_macs(f.g, f.g.nodes[3]) == 0);
}

TEST_CASE("MACs need inferred input shapes and a known op", "[onnx][macs]") {
  GraphFixture f;
  f.input("x", {1, 3, 8, 8}).weight("w", {4, 3, 3, 3}).weight("w2", {5, 4, 1, 1});
  f.node("Conv", "c", {"x", "w"}, {"y"});
  f.node("Conv", "c2", {"y", "w2"}, {"y2"});
  f.node("Mystery", "m", {"y"}, {"z"});
  CHECK(node_macs(f.g, f.g.nodes[0]) == 4 * 36 * 27);  // its inputs' shapes are declared
  CHECK_THAT(error_of([&] { node_macs(f.g, f.g.nodes[1]); }),
             Catch::Contains("Conv node 'c2'") && Catch::Contains("'y'") && Catch::Contains("infer_shapes"));
  CHECK_THAT(error_of([&] { node_macs(f.g, f.g.nodes[2]); }), Catch::Contains("Mystery node 'm'"));
  // Shapes edited after inference so that they no longer fit: an Error, not a wrong count.
  f.g.nodes[2].op_type = "Relu";
  infer_shapes(f.g, {});
  CHECK(node_macs(f.g, f.g.nodes[1]) == 5 * 36 * 4);
  f.g.tensor("y").shape = make_shape({1, 7, 6, 6});
  CHECK_THAT(error_of([&] { node_macs(f.g, f.g.nodes[1]); }),
             Catch::Contains("Conv node 'c2': input 'y' has 7 channels"));
}

TEST_CASE("tiny CNN total MACs scale linearly with the batch", "[onnx][macs]") {
  const std::string bytes = serialize(tiny_cnn_model(1));
  Graph g = load_onnx_bytes(bytes.data(), bytes.size(), "tiny.onnx");
  auto total = [&](int64_t batch) {
    infer_shapes_for_batch(g, batch);
    int64_t s = 0;
    for (const Node& n : g.nodes) s += node_macs(g, n);
    return s;
  };
  // conv1 8*64*27, conv2 8*64*18, fc 10*128 per image
  const int64_t per_image = 8 * 64 * 27 + 8 * 64 * 18 + 10 * 128;
  CHECK(total(1) == per_image);
  CHECK(total(4) == 4 * per_image);
}
