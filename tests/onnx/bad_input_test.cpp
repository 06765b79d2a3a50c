// Bad files and models: each error names the file and the tensor or node at fault.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "frugal/model/onnx_import.h"
#include "frugal/model/tensor_pb.h"
#include "test_models.h"

using namespace frugal;
using namespace frugal::test;

namespace {

std::string write_file(const std::string& dir, const std::string& name, const std::string& bytes) {
  const std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

std::string load_error(const onnx::ModelProto& m, const std::string& origin = "bad.onnx") {
  const std::string b = serialize(m);
  return error_of([&] { load_onnx_bytes(b.data(), b.size(), origin); });
}

}  // namespace

TEST_CASE("file-level failures name the path", "[onnx][errors]") {
  const std::string dir = scratch_dir("bad_files");
  CHECK_THAT(error_of([&] { load_onnx_file(dir + "/missing.onnx"); }),
             Catch::Contains(dir + "/missing.onnx") && Catch::Contains("No such file"));
  CHECK_THAT(error_of([&] { load_onnx_file(dir); }), Catch::Contains(dir) && Catch::Contains("directory"));
  const std::string empty = write_file(dir, "empty.onnx", "");
  CHECK_THAT(error_of([&] { load_onnx_file(empty); }), Catch::Contains(empty) && Catch::Contains("empty"));
  const std::string text = write_file(dir, "text.onnx", "this is not a protobuf, just text\n");
  CHECK_THAT(error_of([&] { load_onnx_file(text); }),
             Catch::Contains(text) && Catch::Contains("not an ONNX model"));
  const std::string full = serialize(tiny_cnn_model(1));
  const std::string cut = write_file(dir, "cut.onnx", full.substr(0, full.size() - 100));
  CHECK_THAT(error_of([&] { load_onnx_file(cut); }), Catch::Contains(cut));
  CHECK_THAT(error_of([&] { load_onnx_bytes("", 0, "<memory>"); }), Catch::StartsWith("<memory>: "));
}

TEST_CASE("external data is refused naming tensor and file", "[onnx][errors]") {
  onnx::ModelProto m = tiny_cnn_model(1);
  onnx::TensorProto* w = m.mutable_graph()->mutable_initializer(0);
  w->set_name("w");
  w->clear_raw_data();
  w->set_data_location(onnx::TensorProto::EXTERNAL);
  auto* kv = w->add_external_data();
  kv->set_key("location");
  kv->set_value("x.bin");
  for (auto& n : *m.mutable_graph()->mutable_node())
    for (auto& i : *n.mutable_input())
      if (i == "w1") i = "w";
  CHECK(load_error(m, "ext.onnx") ==
        "ext.onnx: external data is not supported: tensor 'w' refers to file 'x.bin'");
}

TEST_CASE("unsupported dtypes are refused naming tensor and dtype", "[onnx][errors]") {
  onnx::ModelProto m = tiny_cnn_model(1);
  onnx::TensorProto* s = m.mutable_graph()->add_initializer();
  s->set_name("labels");
  s->set_data_type(onnx::TensorProto::STRING);
  s->add_dims(1);
  s->add_string_data("cat");
  CHECK_THAT(load_error(m),
             Catch::Contains("bad.onnx") && Catch::Contains("tensor 'labels' has unsupported dtype string"));
  s->set_data_type(onnx::TensorProto::COMPLEX64);
  CHECK_THAT(load_error(m), Catch::Contains("tensor 'labels' has unsupported dtype complex64"));

  onnx::ModelProto v = tiny_cnn_model(1);
  v.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::STRING);
  CHECK_THAT(load_error(v), Catch::Contains("value 'x' has unsupported dtype string"));
}

TEST_CASE("semantic errors name the value or node", "[onnx][errors]") {
  SECTION("node reading an undefined value") {
    onnx::ModelProto m = tiny_cnn_model(1);
    m.mutable_graph()->mutable_node(3)->set_input(0, "ghost");
    CHECK_THAT(load_error(m), Catch::StartsWith("bad.onnx: ") && Catch::Contains("node 'conv2'") &&
                                  Catch::Contains("'ghost'"));
  }
  SECTION("initializer byte size does not match its shape") {
    onnx::ModelProto m = tiny_cnn_model(1);
    m.mutable_graph()->mutable_initializer(0)->set_dims(0, 9);
    CHECK_THAT(load_error(m), Catch::Contains("bad.onnx") && Catch::Contains("tensor 'w1'") &&
                                  Catch::Contains("needs 972 bytes but raw_data holds 864"));
    onnx::ModelProto t = tiny_cnn_model(1);
    t.mutable_graph()->mutable_initializer(1)->add_float_data(1.0f);  // b1: typed field with 9 values for [8]
    CHECK_THAT(load_error(t), Catch::Contains("tensor 'b1'") && Catch::Contains("float_data"));
  }
  SECTION("negative dims") {
    onnx::ModelProto m = tiny_cnn_model(1);
    m.mutable_graph()->mutable_initializer(0)->set_dims(0, -8);
    CHECK_THAT(load_error(m), Catch::Contains("tensor 'w1'") && Catch::Contains("negative dimension -8"));
    onnx::ModelProto v = tiny_cnn_model(1);
    v.mutable_graph()
        ->mutable_input(0)
        ->mutable_type()
        ->mutable_tensor_type()
        ->mutable_shape()
        ->mutable_dim(1)
        ->set_dim_value(-3);
    CHECK_THAT(load_error(v), Catch::Contains("value 'x' has negative dimension -3"));
  }
  SECTION("dims whose element count overflows") {
    onnx::ModelProto m = tiny_cnn_model(1);
    for (int i = 0; i < 4; ++i) m.mutable_graph()->mutable_initializer(0)->set_dims(i, int64_t(1) << 20);
    CHECK_THAT(load_error(m), Catch::Contains("tensor 'w1'") && Catch::Contains("overflows"));
  }
  SECTION("duplicate outputs") {
    onnx::ModelProto m = tiny_cnn_model(1);
    m.mutable_graph()->mutable_node(3)->set_output(0, "c1");
    CHECK_THAT(load_error(m),
               Catch::Contains("value 'c1' is produced twice: by node 'conv1' and by node 'conv2'"));
    onnx::ModelProto w = tiny_cnn_model(1);
    w.mutable_graph()->mutable_node(0)->set_output(0, "w2");
    CHECK_THAT(load_error(w),
               Catch::Contains("node 'conv1' writes 'w2', which is already a graph input or initializer"));
  }
  SECTION("no nodes, no outputs, undefined output") {
    onnx::ModelProto m = tiny_cnn_model(1);
    m.mutable_graph()->clear_node();
    CHECK(load_error(m) == "bad.onnx: graph has no nodes");
    onnx::ModelProto o = tiny_cnn_model(1);
    o.mutable_graph()->clear_output();
    CHECK(load_error(o) == "bad.onnx: graph has no outputs");
    onnx::ModelProto u = tiny_cnn_model(1);
    u.mutable_graph()->mutable_output(0)->set_name("nowhere");
    CHECK_THAT(load_error(u), Catch::Contains("graph output 'nowhere' is not produced"));
  }
  SECTION("cycles") {
    onnx::ModelProto m = tiny_cnn_model(1);
    m.mutable_graph()->mutable_node(0)->set_input(0, "r");  // conv1 reads relu's output
    CHECK_THAT(load_error(m),
               Catch::Contains("bad.onnx") && Catch::Contains("cycle") && Catch::Contains("conv1"));
  }
  SECTION("subgraph attributes") {
    onnx::ModelProto m = tiny_cnn_model(1);
    auto* a = m.mutable_graph()->mutable_node(0)->add_attribute();
    a->set_name("body");
    a->set_type(onnx::AttributeProto::GRAPH);
    a->mutable_g()->set_name("sub");
    CHECK_THAT(load_error(m), Catch::Contains("Conv node 'conv1'") && Catch::Contains("attribute 'body'") &&
                                  Catch::Contains("GRAPH"));
  }
}

TEST_CASE("tensor .pb files: errors name the path", "[onnx][errors]") {
  const std::string dir = scratch_dir("bad_pb");
  CHECK_THAT(error_of([&] { load_tensor_pb(dir + "/none.pb"); }), Catch::Contains(dir + "/none.pb"));
  onnx::TensorProto t;
  t.set_name("t");
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(4);
  t.set_raw_data(std::string(12, '\0'));
  std::string bytes;
  t.SerializeToString(&bytes);
  const std::string short_pb = write_file(dir, "short.pb", bytes);
  CHECK_THAT(error_of([&] { load_tensor_pb(short_pb); }),
             Catch::StartsWith(short_pb) && Catch::Contains("needs 16 bytes but raw_data holds 12"));
  t.set_raw_data(std::string(16, '\0'));
  t.SerializeToString(&bytes);
  TensorDesc d = load_tensor_pb(write_file(dir, "ok.pb", bytes));
  CHECK(d.name == "t");
  CHECK(d.data.size() == 16);
}
