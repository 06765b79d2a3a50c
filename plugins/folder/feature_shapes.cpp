#include "folder/feature_shapes.h"

#include <exception>

#include "frugal/model/ops.h"

namespace frugal::folding {

namespace {

constexpr int64_t kMaxTrackedInts = 1024;  // small tensors carry values (Reshape shapes, Resize scales)

std::optional<std::vector<int64_t>> declared(const TensorDesc& t, bool batch_may_be_symbolic) {
  if (!t.has_shape) return std::nullopt;
  std::vector<int64_t> d;
  for (size_t i = 0; i < t.shape.size(); ++i) {
    if (t.shape[i].is_known())
      d.push_back(t.shape[i].value);
    else if (i == 0 && batch_may_be_symbolic)
      d.push_back(1);
    else
      return std::nullopt;
  }
  return d;
}

}  // namespace

ShapeMap infer_feature_shapes(const Graph& g) {
  std::map<std::string, ValueShape> values;
  auto remember = [&](const std::string& name, std::vector<int64_t> dims, DType dtype) {
    ValueShape v;
    v.name = name;
    v.present = true;
    v.dims = std::move(dims);
    v.dtype = dtype;
    values[name] = std::move(v);
  };
  for (const auto& kv : g.tensors) {
    const TensorDesc& t = kv.second;
    if (t.is_initializer) {
      if (!shape_is_known(t.shape)) continue;
      remember(kv.first, known_dims(t.shape), t.dtype);
      ValueShape& v = values[kv.first];
      if (element_count(v.dims) <= kMaxTrackedInts) {
        if (t.dtype == DType::Int64 || t.dtype == DType::Int32) v.ints = t.as_int64();
        if (t.dtype == DType::Float32 || t.dtype == DType::Float64) {
          const std::vector<float> f = t.as_float();
          v.floats = std::vector<double>(f.begin(), f.end());
        }
      }
    } else if (auto d = declared(t, true)) {
      remember(kv.first, *d, t.dtype);
    }
  }
  const int64_t opset = default_opset(g);
  for (const Node& n : g.nodes) {
    if (!find_op(n)) continue;
    std::unique_ptr<Op> op;
    try {
      op = make_op(n, opset);
    } catch (const std::exception&) {
      continue;  // an attribute the registry rejects: its outputs stay as declared
    }
    std::vector<ValueShape> in;
    bool complete = true;
    for (const std::string& name : n.inputs) {
      if (name.empty()) {
        in.emplace_back();
        continue;
      }
      auto it = values.find(name);
      if (it == values.end()) {
        complete = false;
        break;
      }
      in.push_back(it->second);
    }
    if (!complete) continue;
    std::vector<ValueShape> out;
    try {
      out = op->shape(in);
    } catch (const std::exception&) {
      continue;  // a node the table rejects: its outputs stay as declared
    }
    for (size_t i = 0; i < n.outputs.size() && i < out.size(); ++i) {
      if (n.outputs[i].empty() || !out[i].present) continue;
      out[i].name = n.outputs[i];
      if (out[i].ints && static_cast<int64_t>(out[i].ints->size()) > kMaxTrackedInts) out[i].ints.reset();
      values[n.outputs[i]] = std::move(out[i]);
    }
  }
  ShapeMap shapes;
  for (const auto& kv : values) shapes[kv.first] = kv.second.dims;
  return shapes;
}

std::optional<std::vector<int64_t>> shape_of(const ShapeMap& shapes, const std::string& name) {
  auto it = shapes.find(name);
  if (it == shapes.end()) return std::nullopt;
  return it->second;
}

}  // namespace frugal::folding
