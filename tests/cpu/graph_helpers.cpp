#include "graph_helpers.h"

namespace cpu_test {

GraphMaker::GraphMaker(int64_t opset) {
  g_.name = "cpu_test";
  g_.opsets = {{"", opset}};
}

void GraphMaker::input(const std::string& name, const std::vector<int64_t>& dims, bool symbolic_batch) {
  frugal::TensorDesc t;
  t.name = name;
  t.dtype = frugal::DType::Float32;
  t.shape = frugal::make_shape(dims);
  if (symbolic_batch && !t.shape.empty()) t.shape[0] = frugal::Dim{-1, "N"};
  t.has_shape = true;
  g_.tensors[name] = t;
  g_.inputs.push_back(name);
}

void GraphMaker::constant(const std::string& name, const std::vector<int64_t>& dims,
                          const std::vector<float>& values) {
  g_.add_initializer(name, frugal::DType::Float32, dims, values.data());
}

void GraphMaker::constant_i64(const std::string& name, const std::vector<int64_t>& dims,
                              const std::vector<int64_t>& values) {
  g_.add_initializer(name, frugal::DType::Int64, dims, values.data());
}

frugal::Node& GraphMaker::node(const std::string& op, const std::vector<std::string>& inputs,
                               const std::string& output) {
  frugal::Node n;
  n.name = output;
  n.op_type = op;
  n.inputs = inputs;
  n.outputs = {output};
  frugal::TensorDesc t;
  t.name = output;
  t.dtype = frugal::DType::Float32;
  g_.tensors[output] = t;
  g_.nodes.push_back(n);
  return g_.nodes.back();
}

void GraphMaker::output(const std::string& name) { g_.outputs.push_back(name); }

frugal::RefTensor ref_of(const std::vector<int64_t>& dims, const std::vector<float>& v) {
  frugal::RefTensor r;
  r.dims = dims;
  r.data.assign(v.begin(), v.end());
  return r;
}

}  // namespace cpu_test
