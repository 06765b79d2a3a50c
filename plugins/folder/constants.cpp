#include "folder/constants.h"

#include <algorithm>
#include <cstring>

namespace frugal::folding {

namespace {

// The tensor behind `name`: an initializer, or the `value` attribute of the
// Constant node producing it.
const TensorDesc* constant_desc(const Graph& g, const std::string& name) {
  auto it = g.tensors.find(name);
  if (it != g.tensors.end() && it->second.is_initializer) return &it->second;
  const int p = g.producer(name);
  if (p < 0) return nullptr;
  const Node& n = g.nodes[p];
  if (n.op_type != "Constant" || !(n.domain.empty() || n.domain == "ai.onnx")) return nullptr;
  const Attribute* a = n.attr("value");
  if (!a || a->kind != Attribute::Kind::Tensor || !a->t) return nullptr;
  return &*a->t;
}

}  // namespace

std::optional<ConstantTensor> constant_floats(const Graph& g, const std::string& name) {
  const TensorDesc* t = constant_desc(g, name);
  if (!t || (t->dtype != DType::Float32 && t->dtype != DType::Float64)) return std::nullopt;
  if (!t->has_shape && !t->is_initializer) return std::nullopt;
  if (!shape_is_known(t->shape)) return std::nullopt;
  ConstantTensor c;
  c.dims = known_dims(t->shape);
  const size_t n = static_cast<size_t>(element_count(c.dims));
  if (t->data.size() != n * dtype_size(t->dtype)) return std::nullopt;
  c.values.resize(n);
  if (t->dtype == DType::Float32) {
    std::vector<float> f(n);
    if (n) std::memcpy(f.data(), t->data.data(), n * sizeof(float));
    std::copy(f.begin(), f.end(), c.values.begin());
  } else if (n) {
    std::memcpy(c.values.data(), t->data.data(), n * sizeof(double));
  }
  return c;
}

std::optional<std::vector<int64_t>> constant_dims(const Graph& g, const std::string& name) {
  const TensorDesc* t = constant_desc(g, name);
  if (!t || !shape_is_known(t->shape)) return std::nullopt;
  return known_dims(t->shape);
}

bool is_float32_constant(const Graph& g, const std::string& name) {
  const TensorDesc* t = constant_desc(g, name);
  return t && t->dtype == DType::Float32 && shape_is_known(t->shape);
}

int use_count(const Graph& g, const std::string& name) {
  int n = 0;
  for (const Node& node : g.nodes)
    n += static_cast<int>(std::count(node.inputs.begin(), node.inputs.end(), name));
  n += static_cast<int>(std::count(g.outputs.begin(), g.outputs.end(), name));
  return n;
}

}  // namespace frugal::folding
