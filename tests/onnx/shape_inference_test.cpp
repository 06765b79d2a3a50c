// Shape inference per op, on hand-computed cases, and its error messages.
#include "frugal/model/shape_inference.h"

#include <catch2/catch.hpp>
#include <climits>

#include "frugal/model/onnx_import.h"
#include "frugal/model/ops.h"
#include "graph_fixtures.h"
#include "test_models.h"

using namespace frugal;
using namespace frugal::test;
using V = std::vector<int64_t>;

namespace {
const std::map<std::string, V> kDeclared;  // infer from declared shapes
}

TEST_CASE("Conv output sizes: pads, strides, dilations, auto_pad, 1-D", "[onnx][shapes]") {
  GraphFixture f;
  f.input("x", {2, 3, 7, 10}).weight("w", {6, 3, 3, 3}).weight("b", {6}).weight("w1d", {4, 3, 5});
  f.node("Conv", "plain", {"x", "w", "b"}, {"y0"});
  f.node("Conv", "padded", {"x", "w"}, {"y1"}).set_attr_ints("pads", {1, 1, 1, 1});
  Node& s = f.node("Conv", "strided", {"x", "w"}, {"y2"});
  s.set_attr_ints("strides", {2, 3});
  s.set_attr_ints("pads", {0, 1, 0, 2});
  f.node("Conv", "dilated", {"x", "w"}, {"y3"}).set_attr_ints("dilations", {2, 3});
  Node& su = f.node("Conv", "same", {"x", "w"}, {"y4"});
  su.set_attr_ints("strides", {2, 3});
  su.attributes.push_back(Attribute{"auto_pad", Attribute::Kind::String, 0, 0, "SAME_LOWER", {}, {}, {}, {}});
  Node& va = f.node("Conv", "valid", {"x", "w"}, {"y5"});
  va.set_attr_ints("strides", {2, 2});
  va.attributes.push_back(Attribute{"auto_pad", Attribute::Kind::String, 0, 0, "VALID", {}, {}, {}, {}});
  f.input("s", {1, 3, 11});
  f.node("Conv", "conv1d", {"s", "w1d"}, {"y6"}).set_attr_ints("strides", {2});
  infer_shapes(f.g, kDeclared);
  CHECK(f.dims("y0") == V{2, 6, 5, 8});
  CHECK(f.dims("y1") == V{2, 6, 7, 10});
  CHECK(f.dims("y2") == V{2, 6, 3, 4});  // H: (7-3)/2+1; W: (10+3-3)/3+1
  CHECK(f.dims("y3") == V{2, 6, 3, 4});  // effective kernel 5x7
  CHECK(f.dims("y4") == V{2, 6, 4, 4});  // ceil(7/2), ceil(10/3)
  CHECK(f.dims("y5") == V{2, 6, 3, 4});  // (7-3)/2+1, (10-3)/2+1
  CHECK(f.dims("y6") == V{1, 4, 4});     // (11-5)/2+1
  CHECK(f.g.tensor("y0").dtype == DType::Float32);
}

TEST_CASE("grouped Conv checks channels against the weight", "[onnx][shapes]") {
  GraphFixture f;
  f.input("x", {1, 4, 8, 8}).weight("w", {8, 2, 3, 3});
  f.node("Conv", "dw", {"x", "w"}, {"y"}).set_attr_int("group", 2);
  infer_shapes(f.g, kDeclared);
  CHECK(f.dims("y") == V{1, 8, 6, 6});

  f.g.nodes[0].set_attr_int("group", 4);
  CHECK_THAT(error_of([&] { infer_shapes(f.g, kDeclared); }),
             Catch::Contains("Conv node 'dw': input 'x' has 4 channels, weight expects 8"));
}

TEST_CASE("wrong input shape names the node, the input and both channel counts", "[onnx][shapes]") {
  GraphFixture f;
  f.input("x", {-1, 3, 8, 8}).weight("w", {16, 3, 3, 3});
  f.node("Conv", "conv1", {"x", "w"}, {"y"});
  Graph before = f.g;
  CHECK(error_of([&] {
          infer_shapes(f.g, {{"x", {1, 4, 8, 8}}});
        }) == "Conv node 'conv1': input 'x' has 4 channels, weight expects 3");
  CHECK_FALSE(f.g.tensor("y").has_shape);  // unchanged on error
  CHECK(error_of([&] {
          infer_shapes(f.g, {{"x", {1, 3, 8}}});
        }) == "input 'x' is declared with rank 4 [N, 3, 8, 8], but dims [1, 3, 8] were given");
  CHECK_THAT(error_of([&] {
               infer_shapes(f.g, {{"nope", {1}}});
             }),
             Catch::Contains("'nope' is not a graph input"));
  CHECK_THAT(error_of([&] { infer_shapes(f.g, kDeclared); }),
             Catch::Contains("input 'x' has symbolic dims [N, 3, 8, 8]"));
  CHECK_THAT(error_of([&] {
               infer_shapes(f.g, {{"x", {1, 3, 2, 2}}});
             }),
             Catch::Contains("Conv node 'conv1'") && Catch::Contains("smaller than the kernel"));
  infer_shapes_for_batch(f.g, 5);
  CHECK(f.dims("y") == V{5, 16, 6, 6});
  CHECK(f.dims("x") == V{5, 3, 8, 8});
}

TEST_CASE("pooling: ceil_mode, padding, dilations, global pooling, indices", "[onnx][shapes]") {
  GraphFixture f;
  f.input("x", {1, 2, 6, 5});
  Node& a = f.node("MaxPool", "floor", {"x"}, {"y0", "idx"});
  a.set_attr_ints("kernel_shape", {3, 2});
  a.set_attr_ints("strides", {2, 2});
  Node& b = f.node("MaxPool", "ceil", {"x"}, {"y1"});
  b.set_attr_ints("kernel_shape", {3, 2});
  b.set_attr_ints("strides", {2, 2});
  b.set_attr_int("ceil_mode", 1);
  // H: 6+2-2 = 6 -> 4 windows; W: 5+2-2 = 5 -> ceil 3 + 1 = 4, but the 4th starts in the padding: 3.
  Node& c = f.node("AveragePool", "ceil_pad", {"x"}, {"y2"});
  c.set_attr_ints("kernel_shape", {2, 2});
  c.set_attr_ints("strides", {2, 2});
  c.set_attr_ints("pads", {1, 1, 1, 1});
  c.set_attr_int("ceil_mode", 1);
  c.set_attr_int("count_include_pad", 1);
  Node& d = f.node("MaxPool", "dilated", {"x"}, {"y3"});
  d.set_attr_ints("kernel_shape", {2, 2});
  d.set_attr_ints("dilations", {2, 2});
  f.node("GlobalAveragePool", "gap", {"x"}, {"y4"});
  infer_shapes(f.g, kDeclared);
  CHECK(f.dims("y0") == V{1, 2, 2, 2});
  CHECK(f.g.tensor("idx").dtype == DType::Int64);
  CHECK(f.dims("idx") == V{1, 2, 2, 2});
  CHECK(f.dims("y1") == V{1, 2, 3, 3});
  CHECK(f.dims("y2") == V{1, 2, 4, 3});
  CHECK(f.dims("y3") == V{1, 2, 4, 3});
  CHECK(f.dims("y4") == V{1, 2, 1, 1});
}

TEST_CASE("broadcasting, Gemm, MatMul, Concat, Flatten, Transpose, Squeeze", "[onnx][shapes]") {
  GraphFixture f;
  f.input("a", {2, 3, 1, 5}).input("b", {4, 1}).input("m", {6, 4}).input("k", {5, 6});
  f.node("Add", "add", {"a", "b"}, {"s"});
  f.node("Mul", "mul", {"s", "b"}, {"s2"});
  Node& g = f.node("Gemm", "gemm", {"m", "k", "b"}, {"gm"});  // A^T [4,6] x B^T [6,5]; C [4,1] broadcasts
  g.set_attr_int("transA", 1);
  g.set_attr_int("transB", 1);
  f.input("p", {7, 1, 3, 4}).input("q", {5, 4, 2}).input("vec", {4});
  f.node("MatMul", "bmm", {"p", "q"}, {"pq"});
  f.node("MatMul", "mv", {"p", "vec"}, {"pv"});
  f.node("MatMul", "vm", {"vec", "q"}, {"vq"});
  f.node("Concat", "cat", {"a", "a"}, {"cat"}).set_attr_int("axis", -1);
  f.node("Flatten", "flat", {"a"}, {"fl"}).set_attr_int("axis", 2);
  f.node("Transpose", "tr", {"a"}, {"t"}).set_attr_ints("perm", {0, 3, 1, 2});
  f.node("Transpose", "rev", {"a"}, {"rv"});
  f.node("Squeeze", "sq", {"a"}, {"sq"}).set_attr_ints("axes", {2});
  f.node("Squeeze", "sq_all", {"p"}, {"sqa"});
  infer_shapes(f.g, kDeclared);
  CHECK(f.dims("s") == V{2, 3, 4, 5});
  CHECK(f.dims("s2") == V{2, 3, 4, 5});
  CHECK(f.dims("gm") == V{4, 5});
  CHECK(f.dims("pq") == V{7, 5, 3, 2});
  CHECK(f.dims("pv") == V{7, 1, 3});
  CHECK(f.dims("vq") == V{5, 2});
  CHECK(f.dims("cat") == V{2, 3, 1, 10});
  CHECK(f.dims("fl") == V{6, 5});
  CHECK(f.dims("t") == V{2, 5, 3, 1});
  CHECK(f.dims("rv") == V{5, 1, 3, 2});
  CHECK(f.dims("sq") == V{2, 3, 5});
  CHECK(f.dims("sqa") == V{7, 3, 4});
}

TEST_CASE("shape errors name node and values", "[onnx][shapes]") {
  GraphFixture f;
  f.input("a", {2, 3}).input("b", {4, 3}).input("c", {3, 5});
  f.node("Add", "bad_add", {"a", "b"}, {"s"});
  CHECK_THAT(error_of([&] { infer_shapes(f.g, kDeclared); }),
             Catch::Contains("Add node 'bad_add': inputs 'a' [2, 3] and 'b' [4, 3] cannot be broadcast"));
  f.g.nodes[0] = Node{};
  f.g.nodes[0].op_type = "Gemm";
  f.g.nodes[0].name = "fc";
  f.g.nodes[0].inputs = {"a", "b"};
  f.g.nodes[0].outputs = {"s"};
  CHECK_THAT(error_of([&] { infer_shapes(f.g, kDeclared); }),
             Catch::Contains("Gemm node 'fc': inner dimensions differ") && Catch::Contains("K=3") &&
                 Catch::Contains("K=4"));
  f.g.nodes[0].op_type = "NoSuchOp";
  f.node("AlsoUnknown", "n2", {"s"}, {"t"});
  CHECK(unknown_op_nodes(f.g) == std::vector<std::string>{"NoSuchOp (node 'fc')", "AlsoUnknown (node 'n2')"});
  CHECK_THAT(error_of([&] { infer_shapes(f.g, kDeclared); }),
             Catch::Contains("NoSuchOp (node 'fc')") && Catch::Contains("AlsoUnknown (node 'n2')"));
}

TEST_CASE("Reshape from initializers, Constant nodes and Shape arithmetic", "[onnx][shapes]") {
  GraphFixture f;
  f.input("x", {-1, 8, 4, 4});
  f.ints("flat", {0, -1})
      .ints("zeros", {0, 2, 64})
      .ints("minus1", {-1})
      .scalar_int("idx0", 0)
      .ints("axes0", {0});
  f.node("Reshape", "r0", {"x", "flat"}, {"y0"});
  Node& z = f.node("Reshape", "r1", {"x", "zeros"}, {"y1"});
  z.set_attr_int("allowzero", 0);
  // PyTorch's x.view(x.size(0), -1): Shape -> Gather -> Unsqueeze -> Concat -> Reshape.
  f.node("Shape", "shape", {"x"}, {"sh"});
  f.node("Gather", "g", {"sh", "idx0"}, {"n"});
  f.node("Unsqueeze", "u", {"n", "axes0"}, {"n1"});
  f.node("Concat", "c", {"n1", "minus1"}, {"target"}).set_attr_int("axis", 0);
  f.node("Reshape", "r2", {"x", "target"}, {"y2"});
  Node& k = f.node("Constant", "k", {}, {"kshape"});
  k.attributes.push_back(Attribute{"value_ints", Attribute::Kind::Ints, 0, 0, "", {}, {-1, 16}, {}, {}});
  f.node("Reshape", "r3", {"x", "kshape"}, {"y3"});
  infer_shapes_for_batch(f.g, 3);
  CHECK(f.dims("y0") == V{3, 128});
  CHECK(f.dims("y1") == V{3, 2, 64});
  CHECK(f.dims("sh") == V{4});
  CHECK(f.g.tensor("sh").dtype == DType::Int64);
  CHECK(f.dims("y2") == V{3, 128});
  CHECK(f.dims("y3") == V{24, 16});

  GraphFixture bad;
  bad.input("x", {2, 6}).ints("s", {5, -1}).input("dyn", {2}, DType::Int64).ints("two", {-1, -1});
  bad.node("Reshape", "r", {"x", "s"}, {"y"});
  CHECK_THAT(error_of([&] { infer_shapes(bad.g, kDeclared); }),
             Catch::Contains("Reshape node 'r': cannot reshape input 'x' [2, 6] to [5, -1]"));
  bad.g.nodes[0].inputs[1] = "dyn";
  CHECK_THAT(error_of([&] { infer_shapes(bad.g, kDeclared); }),
             Catch::Contains("target shape 'dyn' is not a constant"));
  bad.g.nodes[0].inputs[1] = "two";
  CHECK_THAT(error_of([&] { infer_shapes(bad.g, kDeclared); }), Catch::Contains("more than one -1"));
}

TEST_CASE("BN, Clip (attribute and input forms), Dropout mask, LRN, Softmax keep shapes", "[onnx][shapes]") {
  GraphFixture f;
  f.input("x", {2, 4, 3, 3})
      .weight("g", {4})
      .weight("b", {4})
      .weight("m", {4})
      .weight("v", {4})
      .weight("lo", {});
  f.node("BatchNormalization", "bn", {"x", "g", "b", "m", "v"}, {"y"});
  f.node("Clip", "clip_inputs", {"y", "lo", ""}, {"c"});
  f.node("Clip", "clip_attrs", {"c"}, {"c2"}).set_attr_float("max", 6.0f);
  f.node("Dropout", "drop", {"c2"}, {"d", "mask"});
  f.node("LRN", "lrn", {"d"}, {"l"}).set_attr_int("size", 3);
  f.node("Softmax", "sm", {"l"}, {"s"});
  f.node("Sigmoid", "sig", {"s"}, {"sg"});
  f.node("Relu", "relu", {"sg"}, {"r"});
  f.node("Identity", "id", {"r"}, {"i"});
  infer_shapes(f.g, kDeclared);
  for (const char* n : {"y", "c", "c2", "d", "mask", "l", "s", "sg", "r", "i"})
    CHECK(f.dims(n) == V{2, 4, 3, 3});
  CHECK(f.g.tensor("mask").dtype == DType::Bool);

  GraphFixture bad;
  bad.input("x", {2, 4, 3, 3}).weight("g", {3}).weight("b", {4}).weight("m", {4}).weight("v", {4});
  bad.node("BatchNormalization", "bn", {"x", "g", "b", "m", "v"}, {"y"});
  CHECK_THAT(error_of([&] { infer_shapes(bad.g, kDeclared); }),
             Catch::Contains("BatchNormalization node 'bn': input 'g' (scale) has shape [3], expected [4]"));
}

TEST_CASE("tiny CNN shapes at several batches", "[onnx][shapes]") {
  const std::string bytes = serialize(tiny_cnn_model(1));
  Graph g = load_onnx_bytes(bytes.data(), bytes.size(), "tiny.onnx");
  for (int64_t n : {1, 7}) {
    infer_shapes_for_batch(g, n);
    CHECK(known_dims(g.tensor("c1").shape) == V{n, 8, 8, 8});
    CHECK(known_dims(g.tensor("p").shape) == V{n, 8, 4, 4});
    CHECK(known_dims(g.tensor("f").shape) == V{n, 128});
    CHECK(known_dims(g.tensor("y").shape) == V{n, 10});
  }
  CHECK_THAT(error_of([&] { infer_shapes_for_batch(g, 0); }), Catch::Contains("batch must be positive"));
}

TEST_CASE("the op table lists what the host understands", "[onnx][ops]") {
  for (const char* op : {"Conv",
                         "BatchNormalization",
                         "Relu",
                         "Clip",
                         "Sigmoid",
                         "Mul",
                         "Add",
                         "Concat",
                         "MaxPool",
                         "AveragePool",
                         "GlobalAveragePool",
                         "LRN",
                         "Gemm",
                         "MatMul",
                         "Flatten",
                         "Reshape",
                         "Softmax",
                         "Dropout",
                         "Identity",
                         "Constant"})
    CHECK(op_is_known(op));
  CHECK_FALSE(op_is_known("Loop"));
  std::vector<std::string> ops = known_ops();
  CHECK(std::is_sorted(ops.begin(), ops.end()));
  CHECK(ops.size() >= 20);
}

TEST_CASE("absurd attribute values give errors, not overflow", "[onnx][shapes]") {
  const int64_t big = INT64_MAX / 2 + 1;
  GraphFixture f;
  f.input("x", {1, 2, 8, 8}).weight("w", {2, 2, 3, 3});
  Node& c = f.node("Conv", "conv", {"x", "w"}, {"y"});
  c.set_attr_ints("pads", {big, big, big, big});
  CHECK_THAT(error_of([&] { infer_shapes(f.g, {}); }),
             Catch::Contains("Conv node 'conv'") && Catch::Contains("overflow"));
  c.set_attr_ints("pads", {0, 0, 0, 0});
  c.set_attr_ints("dilations", {big, 1});
  CHECK_THAT(error_of([&] { infer_shapes(f.g, {}); }), Catch::Contains("overflow"));
  c.set_attr_ints("dilations", {1, 1});
  c.set_attr_int("group", big);
  CHECK_THAT(error_of([&] { infer_shapes(f.g, {}); }), Catch::Contains("Conv node 'conv'"));

  GraphFixture p;
  p.input("x", {1, 2, 8, 8});
  Node& m = p.node("MaxPool", "pool", {"x"}, {"y"});
  m.set_attr_ints("kernel_shape", {2, 2});
  m.set_attr_ints("strides", {INT64_MAX, INT64_MAX});
  m.set_attr_int("ceil_mode", 1);
  infer_shapes(p.g, {});  // a huge stride is legal: one window
  CHECK(p.dims("y") == V{1, 2, 1, 1});
  m.set_attr_ints("strides", {0, 1});
  CHECK_THAT(error_of([&] { infer_shapes(p.g, {}); }), Catch::Contains("must be positive"));

  GraphFixture t;
  t.input("x", {2, 3});
  t.node("Transpose", "tr", {"x"}, {"y"}).set_attr_ints("perm", {});
  CHECK_THAT(error_of([&] { infer_shapes(t.g, {}); }), Catch::Contains("is not a permutation"));
  t.g.nodes[0].set_attr_ints("perm", {1, 1});
  CHECK_THAT(error_of([&] { infer_shapes(t.g, {}); }), Catch::Contains("is not a permutation"));
}
