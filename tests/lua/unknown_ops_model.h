// A tiny ONNX model, built with the protobuf schema directly, whose nodes use
// ops frugal does not know: x [1,2,4,4] -> FooOp -> Relu -> BarOp (domain
// "com.example") -> Conv(1x1, weight w [3,2,1,1]) -> y.
#pragma once

#include <onnx/onnx_pb.h>

#include <fstream>
#include <string>

inline void unknown_ops_value_info(onnx::ValueInfoProto* v, const std::string& name,
                                   std::vector<int64_t> dims) {
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t->mutable_shape()->add_dim()->set_dim_value(d);
}

inline void write_unknown_ops_model(const std::string& path) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  auto* ex = m.add_opset_import();
  ex->set_domain("com.example");
  ex->set_version(1);
  auto* g = m.mutable_graph();
  g->set_name("unknown_ops");
  unknown_ops_value_info(g->add_input(), "x", {1, 2, 4, 4});
  unknown_ops_value_info(g->add_output(), "y", {1, 3, 4, 4});
  auto node = [&](const char* name, const char* op, const char* domain, std::vector<std::string> in,
                  const char* out) {
    auto* n = g->add_node();
    n->set_name(name);
    n->set_op_type(op);
    n->set_domain(domain);
    for (auto& i : in) n->add_input(i);
    n->add_output(out);
  };
  node("foo", "FooOp", "", {"x"}, "a");
  node("relu", "Relu", "", {"a"}, "b");
  node("bar", "BarOp", "com.example", {"b"}, "c");
  node("conv", "Conv", "", {"c", "w"}, "y");
  auto* w = g->add_initializer();
  w->set_name("w");
  w->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {3, 2, 1, 1}) w->add_dims(d);
  for (int i = 0; i < 6; ++i) w->add_float_data(0.5f * i);
  std::ofstream f(path, std::ios::binary);
  m.SerializeToOstream(&f);
}
