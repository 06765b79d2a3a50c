// import -> export -> import gives an equal Graph with bit-identical weights, and
// a second export gives identical bytes.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "frugal/error.h"
#include "frugal/model/onnx_export.h"
#include "frugal/model/onnx_import.h"
#include "frugal/model/shape_inference.h"
#include "graphs_equal.h"
#include "test_models.h"

using namespace frugal;
using namespace frugal::test;

namespace {

// Imports `bytes`, exports, re-imports, exports again; checks both equalities.
Graph check_round_trip(const std::string& bytes, const std::string& origin) {
  Graph g1 = load_onnx_bytes(bytes.data(), bytes.size(), origin);
  const std::string b1 = save_onnx_bytes(g1);
  Graph g2 = load_onnx_bytes(b1.data(), b1.size(), origin + " (exported)");
  std::string why;
  INFO(origin);
  CHECK(graphs_equal(g1, g2, &why));
  INFO(why);
  const std::string b2 = save_onnx_bytes(g2);
  CHECK(b1 == b2);
  return g1;
}

// The bytes the importer must produce for an initializer, computed from the proto.
std::vector<uint8_t> expected_bytes(const onnx::TensorProto& t) {
  std::vector<uint8_t> out;
  auto append = [&](const void* p, size_t n) {
    const uint8_t* b = static_cast<const uint8_t*>(p);
    out.insert(out.end(), b, b + n);
  };
  if (t.has_raw_data()) {
    append(t.raw_data().data(), t.raw_data().size());
  } else if (t.data_type() == onnx::TensorProto::FLOAT) {
    for (float f : t.float_data()) append(&f, 4);
  } else if (t.data_type() == onnx::TensorProto::DOUBLE) {
    for (double d : t.double_data()) append(&d, 8);
  } else if (t.data_type() == onnx::TensorProto::INT64) {
    for (int64_t i : t.int64_data()) append(&i, 8);
  } else if (t.data_type() == onnx::TensorProto::FLOAT16) {
    for (int32_t i : t.int32_data()) {
      uint16_t h = static_cast<uint16_t>(i);
      append(&h, 2);
    }
  }
  return out;
}

}  // namespace

TEST_CASE("tiny CNN: import keeps every weight bit-exact and round-trips", "[onnx][roundtrip]") {
  const onnx::ModelProto m = tiny_cnn_model(7);
  Graph g = check_round_trip(serialize(m), "tiny_cnn.onnx");

  // Against the proto itself (independent of the exporter).
  REQUIRE(g.initializer_order.size() == static_cast<size_t>(m.graph().initializer_size()));
  for (const onnx::TensorProto& t : m.graph().initializer()) {
    INFO(t.name());
    REQUIRE(g.is_initializer(t.name()));
    const TensorDesc& d = g.tensor(t.name());
    CHECK(static_cast<int32_t>(d.dtype) == t.data_type());
    CHECK(known_dims(d.shape) == std::vector<int64_t>(t.dims().begin(), t.dims().end()));
    CHECK(d.data == expected_bytes(t));
  }
  CHECK(g.inputs == std::vector<std::string>{"x"});
  CHECK(g.outputs == std::vector<std::string>{"y"});
  CHECK(g.tensor("x").shape[0].symbol == "N");
  CHECK(g.tensor("x").doc == "the image");
  CHECK(g.tensor("c1").doc == "after conv1");
  CHECK(g.tensor("w1").doc == "first conv weight");
  CHECK(g.ir_version == 7);
  CHECK(g.producer_name == "frugal-test");
  CHECK(g.producer_version == "1.0");
  CHECK(g.model_doc == "model doc");
  CHECK(g.graph_doc == "graph doc");
  CHECK(g.model_domain == "org.frugal.test");
  CHECK(g.model_version == 3);
  REQUIRE(g.metadata_props.size() == 1);
  CHECK(g.metadata_props[0].second == "round trip");
  REQUIRE(g.nodes.size() == 9);
  CHECK(g.nodes[2].name == "Relu_2");  // unnamed node gets "<op>_<file index>"
  CHECK(g.nodes[0].doc == "stride-2 conv");
  std::vector<std::string> attr_order;
  for (const Attribute& a : g.nodes[0].attributes) attr_order.push_back(a.name);
  CHECK(attr_order == std::vector<std::string>{"kernel_shape", "pads", "strides"});
}

TEST_CASE("nodes stored out of order are sorted topologically", "[onnx][import]") {
  const onnx::ModelProto m = tiny_cnn_model(4);
  onnx::ModelProto reversed = m;
  auto* nodes = reversed.mutable_graph()->mutable_node();
  std::reverse(nodes->begin(), nodes->end());
  const std::string a = serialize(m), b = serialize(reversed);
  Graph sorted = load_onnx_bytes(a.data(), a.size(), "sorted.onnx");
  Graph g = load_onnx_bytes(b.data(), b.size(), "reversed.onnx");
  std::vector<std::string> order, expected;
  for (const Node& n : g.nodes) order.push_back(n.op_type);
  for (const Node& n : sorted.nodes) expected.push_back(n.op_type);
  // The Constant has no inputs, so it may move ahead; every node must follow its producers.
  std::set<std::string> seen(g.inputs.begin(), g.inputs.end());
  for (const auto& kv : g.tensors)
    if (kv.second.is_initializer) seen.insert(kv.first);
  for (const Node& n : g.nodes) {
    for (const std::string& i : n.inputs) CHECK((i.empty() || seen.count(i)));
    seen.insert(n.outputs.begin(), n.outputs.end());
  }
  std::sort(order.begin(), order.end());
  std::sort(expected.begin(), expected.end());
  CHECK(order == expected);
  CHECK(g.nodes.back().op_type == "Softmax");
}

TEST_CASE("every attribute kind and omitted inputs/outputs round-trip", "[onnx][roundtrip]") {
  Graph g = check_round_trip(serialize(attribute_kinds_model()), "attrs.onnx");
  const Node& n = g.nodes.at(0);
  CHECK(n.domain == "org.frugal.test");
  CHECK(n.inputs == std::vector<std::string>{"a", ""});
  CHECK(n.outputs == std::vector<std::string>{"b", "", "c"});
  REQUIRE(n.attributes.size() == 8);
  CHECK(std::signbit(n.attr_float("f", 1.0f)));
  CHECK(n.attr_int("i", 0) == -7);
  CHECK(n.attr_string("s", "") == std::string("bytes\0with nul", 14));
  REQUIRE(n.attr("t")->t.has_value());
  CHECK(n.attr("t")->t->data == std::vector<uint8_t>{1, 255, 0});
  CHECK(std::isnan(n.attr("fs")->floats.at(1)));
  CHECK(n.attr_ints("is", {}) == std::vector<int64_t>{1, -2, 3});
  CHECK(n.attr("ss")->strings == std::vector<std::string>{"one", ""});
  CHECK(n.attr("untyped")->kind == Attribute::Kind::Int);
  CHECK(n.attr_int("untyped", 0) == 42);
  CHECK(g.tensor("dangling_doc").doc == "documented, never produced");
  CHECK_FALSE(g.has_tensor("dangling_bare"));
  CHECK(g.tensor("c").dtype == DType::Undefined);
  CHECK_FALSE(g.tensor("c").has_shape);
}

TEST_CASE("initializers listed as graph inputs (IR 3) are initializers, and stay listed on export",
          "[onnx][roundtrip]") {
  onnx::ModelProto m = tiny_cnn_model(3);
  m.set_ir_version(3);
  for (const onnx::TensorProto& t : m.graph().initializer()) {
    std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
    set_value_info(*m.mutable_graph()->add_input(), t.name(), dims, t.data_type());
  }
  Graph g = check_round_trip(serialize(m), "ir3.onnx");
  CHECK(g.inputs == std::vector<std::string>{"x"});
  CHECK(g.is_initializer("w1"));

  onnx::ModelProto exported;
  const std::string bytes = save_onnx_bytes(g);
  REQUIRE(exported.ParseFromString(bytes));
  CHECK(exported.graph().input_size() == 1 + m.graph().initializer_size());
}

TEST_CASE("inferred shapes are exported as value_info and read back", "[onnx][roundtrip]") {
  Graph g =
      load_onnx_bytes(serialize(tiny_cnn_model(1)).c_str(), serialize(tiny_cnn_model(1)).size(), "m.onnx");
  infer_shapes_for_batch(g, 2);
  const std::string b = save_onnx_bytes(g);
  Graph g2 = load_onnx_bytes(b.data(), b.size(), "m2.onnx");
  std::string why;
  CHECK(graphs_equal(g, g2, &why));
  INFO(why);
  CHECK(known_dims(g2.tensor("p").shape) == std::vector<int64_t>{2, 8, 4, 4});
}

TEST_CASE("save_onnx_file / load_onnx_file round trip", "[onnx][roundtrip]") {
  const std::string dir = scratch_dir("file_roundtrip");
  const std::string path = dir + "/tiny.onnx";
  Graph g =
      load_onnx_bytes(serialize(tiny_cnn_model(5)).c_str(), serialize(tiny_cnn_model(5)).size(), "m.onnx");
  save_onnx_file(g, path);
  Graph g2 = load_onnx_file(path);
  std::string why;
  CHECK(graphs_equal(g, g2, &why));
  INFO(why);
  CHECK_THROWS_WITH(save_onnx_file(g, dir + "/no/such/dir/x.onnx"), Catch::Contains("no/such/dir/x.onnx"));
}

TEST_CASE("every importable ONNX node test model round-trips", "[onnx][roundtrip][testdata]") {
  const std::filesystem::path root = std::filesystem::path(FRUGAL_ONNX_TESTDATA) / "node";
  INFO("libonnx-testdata (a Debian build dependency) at " << root.string());
  REQUIRE(std::filesystem::exists(root));
  int imported = 0;
  for (const auto& entry : std::filesystem::directory_iterator(root)) {
    const std::string path = (entry.path() / "model.onnx").string();
    std::string bytes;
    {
      std::ifstream in(path, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    try {
      load_onnx_bytes(bytes.data(), bytes.size(), path);
    } catch (const Error&) {
      continue;  // refused (subgraphs, sequences, strings, ...): covered by testdata_test
    }
    check_round_trip(bytes, path);
    ++imported;
  }
  WARN("round-tripped " << imported << " ONNX node test models");
  CHECK(imported > 600);
}
