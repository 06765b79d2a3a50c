#include "test_models.h"

#include <cstring>
#include <filesystem>
#include <limits>
#include <random>

namespace frugal::test {

namespace {

std::vector<float> random_floats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = static_cast<float>(static_cast<int32_t>(rng() % 2001) - 1000) / 1000.0f;
  return v;
}

size_t count(const std::vector<int64_t>& dims) {
  size_t n = 1;
  for (int64_t d : dims) n *= static_cast<size_t>(d);
  return n;
}

onnx::NodeProto* add_node(onnx::GraphProto& g, const std::string& op, const std::string& name,
                          std::vector<std::string> in, std::vector<std::string> out) {
  onnx::NodeProto* n = g.add_node();
  n->set_op_type(op);
  if (!name.empty()) n->set_name(name);
  for (auto& i : in) n->add_input(i);
  for (auto& o : out) n->add_output(o);
  return n;
}

void attr_ints(onnx::NodeProto* n, const std::string& name, std::vector<int64_t> v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t x : v) a->add_ints(x);
}

void attr_int(onnx::NodeProto* n, const std::string& name, int64_t v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(v);
}

void attr_float(onnx::NodeProto* n, const std::string& name, float v) {
  auto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::FLOAT);
  a->set_f(v);
}

}  // namespace

onnx::TensorProto* add_raw_initializer(onnx::GraphProto& g, const std::string& name,
                                       std::vector<int64_t> dims, uint32_t seed) {
  onnx::TensorProto* t = g.add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->add_dims(d);
  std::vector<float> v = random_floats(count(dims), seed);
  t->set_raw_data(v.data(), v.size() * sizeof(float));
  return t;
}

void set_value_info(onnx::ValueInfoProto& v, const std::string& name, std::vector<int64_t> dims,
                    int32_t elem_type) {
  v.set_name(name);
  auto* tt = v.mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem_type);
  auto* shape = tt->mutable_shape();
  for (int64_t d : dims) {
    auto* dim = shape->add_dim();
    if (d < 0)
      dim->set_dim_param("N");
    else
      dim->set_dim_value(d);
  }
}

onnx::ModelProto tiny_cnn_model(uint32_t seed) {
  onnx::ModelProto m;
  m.set_ir_version(7);
  auto* op = m.add_opset_import();
  op->set_domain("");
  op->set_version(13);
  m.set_producer_name("frugal-test");
  m.set_producer_version("1.0");
  m.set_doc_string("model doc");
  m.set_domain("org.frugal.test");
  m.set_model_version(3);
  auto* meta = m.add_metadata_props();
  meta->set_key("purpose");
  meta->set_value("round trip");

  onnx::GraphProto& g = *m.mutable_graph();
  g.set_name("tiny_cnn");
  g.set_doc_string("graph doc");
  set_value_info(*g.add_input(), "x", {-1, 3, 16, 16});
  g.mutable_input(0)->set_doc_string("the image");

  add_raw_initializer(g, "w1", {8, 3, 3, 3}, seed + 1)->set_doc_string("first conv weight");
  {  // bias as float_data: the importer must convert typed fields exactly
    onnx::TensorProto* b = g.add_initializer();
    b->set_name("b1");
    b->set_data_type(onnx::TensorProto::FLOAT);
    b->add_dims(8);
    for (float f : random_floats(8, seed + 2)) b->add_float_data(f);
  }
  add_raw_initializer(g, "bn_scale", {8}, seed + 3);
  add_raw_initializer(g, "bn_bias", {8}, seed + 4);
  add_raw_initializer(g, "bn_mean", {8}, seed + 5);
  {
    onnx::TensorProto* v = add_raw_initializer(g, "bn_var", {8}, seed + 6);
    std::vector<float> var = random_floats(8, seed + 6);
    for (float& x : var) x = 0.5f + x * x;
    v->set_raw_data(var.data(), var.size() * sizeof(float));
  }
  add_raw_initializer(g, "w2", {8, 2, 3, 3}, seed + 7);
  add_raw_initializer(g, "fc_w", {10, 128}, seed + 8);
  {
    onnx::TensorProto* b = g.add_initializer();
    b->set_name("fc_b");
    b->set_data_type(onnx::TensorProto::FLOAT);
    b->add_dims(10);
    for (float f : random_floats(10, seed + 9)) b->add_float_data(f);
  }
  {  // unused initializers of other typed fields: double_data, int64_data, int32_data (fp16 bits)
    onnx::TensorProto* d = g.add_initializer();
    d->set_name("unused_f64");
    d->set_data_type(onnx::TensorProto::DOUBLE);
    d->add_dims(3);
    for (double v : {0.1, -2.5e300, 3.0}) d->add_double_data(v);
    onnx::TensorProto* i = g.add_initializer();
    i->set_name("unused_i64");
    i->set_data_type(onnx::TensorProto::INT64);
    i->add_dims(2);
    i->add_int64_data(INT64_MIN);
    i->add_int64_data(7);
    onnx::TensorProto* h = g.add_initializer();
    h->set_name("unused_f16");
    h->set_data_type(onnx::TensorProto::FLOAT16);
    h->add_dims(2);
    h->add_int32_data(0x3c00);  // 1.0
    h->add_int32_data(0xfbff);  // -65504
  }

  auto* conv1 = add_node(g, "Conv", "conv1", {"x", "w1", "b1"}, {"c1"});
  attr_ints(conv1, "kernel_shape", {3, 3});
  attr_ints(conv1, "pads", {1, 1, 1, 1});
  attr_ints(conv1, "strides", {2, 2});
  conv1->set_doc_string("stride-2 conv");
  auto* bn =
      add_node(g, "BatchNormalization", "bn1", {"c1", "bn_scale", "bn_bias", "bn_mean", "bn_var"}, {"b"});
  attr_float(bn, "epsilon", 1e-5f);
  add_node(g, "Relu", "", {"b"}, {"r"});  // unnamed: import names it
  auto* conv2 = add_node(g, "Conv", "conv2", {"r", "w2"}, {"c2"});
  attr_int(conv2, "group", 4);
  attr_ints(conv2, "pads", {1, 1, 1, 1});
  auto* pool = add_node(g, "MaxPool", "pool", {"c2"}, {"p"});
  attr_ints(pool, "kernel_shape", {2, 2});
  attr_ints(pool, "strides", {2, 2});
  auto* shape = add_node(g, "Constant", "shape_const", {}, {"target_shape"});
  {
    auto* a = shape->add_attribute();
    a->set_name("value");
    a->set_type(onnx::AttributeProto::TENSOR);
    onnx::TensorProto* t = a->mutable_t();
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(2);
    t->add_int64_data(0);
    t->add_int64_data(-1);
  }
  add_node(g, "Reshape", "flatten", {"p", "target_shape"}, {"f"});
  auto* fc = add_node(g, "Gemm", "fc", {"f", "fc_w", "fc_b"}, {"logits"});
  attr_float(fc, "alpha", 1.0f);
  attr_float(fc, "beta", 1.0f);
  attr_int(fc, "transB", 1);
  auto* sm = add_node(g, "Softmax", "softmax", {"logits"}, {"y"});
  attr_int(sm, "axis", 1);

  set_value_info(*g.add_output(), "y", {-1, 10});
  set_value_info(*g.add_value_info(), "c1", {-1, 8, 8, 8});
  g.mutable_value_info(0)->set_doc_string("after conv1");
  return m;
}

onnx::ModelProto attribute_kinds_model() {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* op = m.add_opset_import();
  op->set_domain("org.frugal.test");
  op->set_version(1);
  onnx::GraphProto& g = *m.mutable_graph();
  g.set_name("attrs");
  set_value_info(*g.add_input(), "a", {2, 3});
  auto* n = add_node(g, "Custom", "custom", {"a", ""}, {"b", "", "c"});
  n->set_domain("org.frugal.test");
  attr_float(n, "f", -0.0f);
  attr_int(n, "i", -7);
  {
    auto* a = n->add_attribute();
    a->set_name("s");
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(std::string("bytes\0with nul", 14));
  }
  {
    auto* a = n->add_attribute();
    a->set_name("t");
    a->set_type(onnx::AttributeProto::TENSOR);
    a->mutable_t()->set_data_type(onnx::TensorProto::UINT8);
    a->mutable_t()->add_dims(3);
    for (int v : {1, 255, 0}) a->mutable_t()->add_int32_data(v);
  }
  {
    auto* a = n->add_attribute();
    a->set_name("fs");
    a->set_type(onnx::AttributeProto::FLOATS);
    for (float v : {1.5f, std::numeric_limits<float>::quiet_NaN(), -3.25f}) a->add_floats(v);
  }
  attr_ints(n, "is", {1, -2, 3});
  {
    auto* a = n->add_attribute();
    a->set_name("ss");
    a->set_type(onnx::AttributeProto::STRINGS);
    a->add_strings("one");
    a->add_strings("");
  }
  {  // pre-IR-3 style attribute without a type field
    auto* a = n->add_attribute();
    a->set_name("untyped");
    a->set_i(42);
  }
  set_value_info(*g.add_output(), "b", {2, 3});
  onnx::ValueInfoProto* c = g.add_output();
  c->set_name("c");                              // an output without a type
  onnx::ValueInfoProto* d = g.add_value_info();  // value infos without a type
  d->set_name("dangling_doc");
  d->set_doc_string("documented, never produced");
  g.add_value_info()->set_name("dangling_bare");
  return m;
}

std::string serialize(const onnx::ModelProto& m) {
  std::string s;
  m.SerializeToString(&s);
  return s;
}

std::string scratch_dir(const std::string& name) {
  std::filesystem::path p = std::filesystem::path(FRUGAL_TEST_BINARY_DIR) / "test-scratch" / "onnx" / name;
  std::filesystem::remove_all(p);
  std::filesystem::create_directories(p);
  return p.string();
}

}  // namespace frugal::test
