// The Lua model API, on ONNX backend test models (shapes and attributes known
// from the ONNX test generator) and zoo toys; MACs against the convolution
// formula N*M*Ho*Wo*(C/group)*kh*kw evaluated here.
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "frugal/model/graph.h"
#include "lua_fixture.h"
#include "unknown_ops_model.h"
#include "zoo/zoo.h"

using Catch::Matchers::Contains;

namespace {

const std::string kNodes = FRUGAL_ONNX_TESTDATA "/node";

std::string temp_path(const std::string& name) {
  return std::string(FRUGAL_TEST_BINARY_DIR) + "/model_api_test_" + std::to_string(getpid()) + "_" + name;
}

// Output size of a convolution along one axis.
int64_t conv_out(int64_t in, int64_t k, int64_t pad_sum, int64_t stride) {
  return (in + pad_sum - k) / stride + 1;
}

}  // namespace

TEST_CASE("model: inputs, outputs, nodes and attributes of an ONNX test model", "[lua][model]") {
  LuaFixture f;
  f.run("m = frugal.load('" + kNodes + "/test_conv_with_strides_padding/model.onnx')");
  // The ONNX generator: x [1,1,7,5], W [1,1,3,3], strides 2, pads 1 -> y [1,1,4,3].
  CHECK(f.number("#m:inputs()") == 2);
  CHECK(f.string("m:inputs()[1].name") == "x");
  CHECK(f.string("m:inputs()[1].dtype") == "float32");
  CHECK(f.string("table.concat(m:inputs()[1].shape, ',')") == "1,1,7,5");
  CHECK(f.string("table.concat(m:inputs()[2].shape, ',')") == "1,1,3,3");
  CHECK(f.string("m:outputs()[1].name") == "y");
  CHECK(f.number("#m:nodes()") == 1);
  CHECK(f.string("m:nodes()[1].op") == "Conv");
  CHECK(f.string("table.concat(m:nodes()[1].inputs, ',')") == "x,W");
  CHECK(f.string("table.concat(m:nodes()[1].attributes.strides, ',')") == "2,2");
  CHECK(f.string("table.concat(m:nodes()[1].attributes.pads, ',')") == "1,1,1,1");
  CHECK(f.string("table.concat(m:nodes()[1].attributes.kernel_shape, ',')") == "3,3");
  std::string name = f.string("m:nodes()[1].name");
  CHECK(f.string("m:node('" + name + "').op") == "Conv");
  CHECK(f.boolean("m:node('no such node') == nil"));
  CHECK(f.boolean("m:tensor('no such tensor') == nil"));
  CHECK_THAT(f.string("tostring(m)"), Contains("test_conv_with_strides_padding/model.onnx"));

  f.run("m:infer_shapes{}");
  int64_t ho = conv_out(7, 3, 2, 2), wo = conv_out(5, 3, 2, 2);
  CHECK(f.string("table.concat(m:tensor('y').shape, ',')") ==
        "1,1," + std::to_string(ho) + "," + std::to_string(wo));
  f.run("per, total, missing = m:macs()");
  CHECK(f.number("total") == 1 * 1 * ho * wo * 1 * 3 * 3);
  CHECK(f.number("per[1].macs") == 1 * 1 * ho * wo * 1 * 3 * 3);
  CHECK(f.number("missing") == 0);

  // New input sizes through the table form.
  f.run("m:infer_shapes{x = {2, 1, 9, 9}, W = {1, 1, 3, 3}}");
  CHECK(f.string("table.concat(m:tensor('y').shape, ',')") == "2,1,5,5");
  CHECK(f.number("select(2, m:macs())") == 2 * 5 * 5 * 9);
}

TEST_CASE("model: zoo toy with symbolic batch, initializers, MACs per conv", "[lua][model]") {
  frugal::Graph ref = frugal::build_zoo_model("toy_tiny", 3);
  LuaFixture f;
  f.run("m = frugal.zoo('toy_tiny', {seed = 3})");
  CHECK(f.string("m:origin()") == "zoo:toy_tiny");
  CHECK(f.string("m:inputs()[1].shape[1]") == "N");  // symbolic dims show their name
  CHECK(f.number("m:parameter_count()") == frugal::torchvision_parameter_count(ref));
  CHECK(f.number("m:initializer_value_count()") == ref.parameter_count());
  CHECK(f.number("#m:nodes()") == ref.nodes.size());

  // Initializer data copies are bit-exact.
  const frugal::Node& conv = ref.nodes[0];
  REQUIRE(conv.op_type == "Conv");
  const frugal::TensorDesc& w = ref.tensor(conv.inputs[1]);
  f.run("w = m:tensor('" + w.name + "')");
  CHECK(f.boolean("w.initializer"));
  std::vector<int64_t> wd = frugal::known_dims(w.shape);
  CHECK(f.number("w.data:numel()") == frugal::element_count(wd));
  for (size_t i = 0; i < wd.size(); ++i)
    CHECK(f.number("w.data:size(" + std::to_string(i + 1) + ")") == wd[i]);
  std::vector<float> wf = w.as_float();
  f.run("flat = w.data:reshape(w.data:numel())");
  for (size_t i = 0; i < wf.size(); i += 7) CHECK(f.number("flat[" + std::to_string(i + 1) + "]") == wf[i]);

  // Every Conv's MACs at batch 2 from the shapes the model reports.
  f.run("m:infer_shapes(2); per = m:macs()");
  int convs = 0;
  for (size_t i = 0; i < ref.nodes.size(); ++i) {
    const frugal::Node& n = ref.nodes[i];
    if (n.op_type != "Conv") continue;
    ++convs;
    auto dim = [&](const std::string& t, int k) {
      return static_cast<int64_t>(f.number("m:tensor('" + t + "').shape[" + std::to_string(k) + "]"));
    };
    int64_t N = dim(n.outputs[0], 1), M = dim(n.outputs[0], 2), Ho = dim(n.outputs[0], 3),
            Wo = dim(n.outputs[0], 4);
    int64_t Cg = dim(n.inputs[1], 2), kh = dim(n.inputs[1], 3), kw = dim(n.inputs[1], 4);
    CHECK(N == 2);
    CHECK(f.number("per[" + std::to_string(i + 1) + "].macs") == N * M * Ho * Wo * Cg * kh * kw);
  }
  CHECK(convs >= 2);
}

TEST_CASE("model: random_input shapes, determinism, several inputs", "[lua][model]") {
  LuaFixture f;
  f.run(R"(
    m = frugal.zoo('toy_tiny')
    a = frugal.random_input(m, 3, 11)
    b = frugal.random_input(m, 3, 11)
    c = frugal.random_input(m, 3, 12)
  )");
  CHECK(f.string("table.concat(a:size(), ',')") == "3,3,8,8");
  CHECK(f.number("a:max_abs_diff(b)") == 0);
  CHECK(f.number("a:max_abs_diff(c)") > 0);
  CHECK(f.number("a:min()") >= -1);
  CHECK(f.number("a:max()") < 1);
  f.run("two = frugal.random_input(frugal.load('" + kNodes +
        "/test_basic_conv_with_padding/model.onnx'), 4, 1)");
  CHECK(f.string("table.concat(two.x:size(), ',')") == "4,1,5,5");
  CHECK(f.string("table.concat(two.W:size(), ',')") == "4,1,3,3");
  CHECK_THAT(f.error_of("frugal.random_input(m, 0)"), Contains("batch must be >= 1"));
  CHECK_THAT(f.error_of("frugal.random_input(m, 2^40)"), Contains("more than this machine's"));
  CHECK_THAT(f.error_of("frugal.random_input({}, 1)"), Contains("frugal.Model expected"));
}

TEST_CASE("model: unknown ops are all listed, other nodes still counted", "[lua][model]") {
  std::string path = temp_path("unknown.onnx");
  write_unknown_ops_model(path);
  LuaFixture f;
  f.run("m = frugal.load('" + path + "'); u = m:unknown_ops()");
  CHECK(f.number("#u") == 2);
  CHECK(f.string("u[1]") == "FooOp (node 'foo')");
  CHECK_THAT(f.string("u[2]"), Contains("BarOp"));
  CHECK_THAT(f.string("u[2]"), Contains("'bar'"));
  f.run("per, total, missing = m:macs()");
  CHECK(f.number("missing") >= 2);
  CHECK(f.boolean("per[1].macs == nil and per[1].why ~= nil"));
  std::remove(path.c_str());
}

TEST_CASE("model: save and load again", "[lua][model]") {
  std::string path = temp_path("saved.onnx");
  LuaFixture f;
  f.run("m = frugal.zoo('toy_branched'); m:save('" + path + "'); m2 = frugal.load('" + path + "')");
  CHECK(f.number("#m2:nodes()") == f.number("#m:nodes()"));
  CHECK(f.number("m2:parameter_count()") == f.number("m:parameter_count()"));
  f.run(R"(
    same = true
    local a, b = m:nodes(), m2:nodes()
    for i = 1, #a do
      same = same and a[i].name == b[i].name and a[i].op == b[i].op
             and table.concat(a[i].inputs, ',') == table.concat(b[i].inputs, ',')
    end
  )");
  CHECK(f.boolean("same"));
  std::remove(path.c_str());
}

TEST_CASE("model: bad files and arguments give errors naming them", "[lua][model]") {
  LuaFixture f;
  std::string missing = temp_path("missing.onnx");
  CHECK_THAT(f.error_of("frugal.load('" + missing + "')"), Contains(missing));
  std::string garbage = temp_path("garbage.onnx");
  {
    std::ofstream g(garbage, std::ios::binary);
    g << "this is not a protobuf \x01\x02\xff\xfe";
  }
  std::string msg = f.error_of("frugal.load('" + garbage + "')");
  CHECK_THAT(msg, Contains(garbage));
  CHECK_THAT(msg, Contains("frugal.load:"));
  std::remove(garbage.c_str());
  CHECK_THAT(f.error_of("frugal.load()"), Contains("bad argument #1 to 'load'"));
  CHECK_THAT(f.error_of("frugal.zoo('no_such_net')"), Contains("unknown zoo model 'no_such_net'"));
  f.run("m = frugal.zoo('toy_tiny')");
  CHECK_THAT(f.error_of("m:infer_shapes{nope = {1}}"), Contains("has no input named 'nope'"));
  CHECK_THAT(f.error_of("m:infer_shapes{input = {1, 3, -8, 8}}"), Contains("must be >= 0"));
  CHECK_THAT(f.error_of("m:infer_shapes(0)"), Contains("batch must be >= 1"));
  CHECK_THAT(f.error_of("m:infer_shapes('x')"), Contains("number expected"));
  CHECK_THAT(f.error_of("m:save('/nonexistent-dir/m.onnx')"), Contains("/nonexistent-dir/m.onnx"));
  CHECK_THAT(f.error_of("return m.nodes(42)"), Contains("frugal.Model expected"));
  f.run("getmetatable(m).__gc(m)");
  CHECK_THAT(f.error_of("return m:nodes()"), Contains("model:nodes: argument #1 is a closed model"));
}
