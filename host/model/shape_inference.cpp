#include "frugal/model/shape_inference.h"

#include <algorithm>

#include "frugal/error.h"
#include "frugal/model/ops.h"

namespace frugal {

namespace {

// Tensors up to this many elements carry their values through inference (shape
// arithmetic such as Shape -> Gather -> Concat -> Reshape, Resize scales).
constexpr int64_t kMaxTrackedInts = 1024;

std::string dims_str(const std::vector<int64_t>& d) { return shape_to_string(make_shape(d)); }

ValueShape from_initializer(const TensorDesc& t) {
  ValueShape v;
  v.name = t.name;
  v.present = true;
  v.dims = known_dims(t.shape);
  v.dtype = t.dtype;
  if (element_count(v.dims) > kMaxTrackedInts) return v;
  if (t.dtype == DType::Int64 || t.dtype == DType::Int32) v.ints = t.as_int64();
  if (t.dtype == DType::Float32 || t.dtype == DType::Float64) {
    const std::vector<float> f = t.as_float();
    v.floats = std::vector<double>(f.begin(), f.end());
  }
  return v;
}

}  // namespace

void infer_shapes(Graph& g, const std::map<std::string, std::vector<int64_t>>& input_dims) {
  for (const auto& kv : input_dims)
    if (std::find(g.inputs.begin(), g.inputs.end(), kv.first) == g.inputs.end()) {
      std::string names;
      for (const std::string& i : g.inputs) names += (names.empty() ? "" : ", ") + i;
      throw Error("infer_shapes: '" + kv.first + "' is not a graph input (inputs: " + names + ")");
    }
  std::vector<std::string> unknown = unknown_op_nodes(g);
  if (!unknown.empty()) {
    std::string msg = "cannot infer shapes: unknown ops:";
    for (const std::string& u : unknown) msg += " " + u + ";";
    msg.pop_back();
    throw Error(msg);
  }

  for (const std::string& name : g.inputs)
    if (!g.has_tensor(name)) throw Error("graph input '" + name + "' has no tensor description");

  std::map<std::string, ValueShape> values;
  for (const std::string& name : g.inputs) {
    const TensorDesc& t = g.tensor(name);
    ValueShape v;
    v.name = name;
    v.present = true;
    v.dtype = t.dtype;
    auto it = input_dims.find(name);
    if (it != input_dims.end()) {
      if (t.has_shape && t.shape.size() != it->second.size())
        throw Error("input '" + name + "' is declared with rank " + std::to_string(t.shape.size()) + " " +
                    shape_to_string(t.shape) + ", but dims " + dims_str(it->second) + " were given");
      for (int64_t d : it->second)
        if (d < 0)
          throw Error("input '" + name + "': dims " + dims_str(it->second) + " contain a negative size");
      v.dims = it->second;
    } else {
      if (!t.has_shape) throw Error("input '" + name + "' has no declared shape; give its dims");
      if (!shape_is_known(t.shape))
        throw Error("input '" + name + "' has symbolic dims " + shape_to_string(t.shape) + "; give its dims");
      v.dims = known_dims(t.shape);
    }
    values[name] = std::move(v);
  }
  for (const auto& kv : g.tensors)
    if (kv.second.is_initializer) values[kv.first] = from_initializer(kv.second);

  const int64_t opset = default_opset(g);
  for (const Node& n : g.nodes) {
    const std::unique_ptr<Op> op = make_op(n, opset);  // Error "<Op> node '<name>': ..."
    std::vector<ValueShape> in;
    for (const std::string& name : n.inputs) {
      if (name.empty()) {
        in.emplace_back();
        continue;
      }
      auto it = values.find(name);
      if (it == values.end())
        throw Error(n.op_type + " node '" + n.name + "': input '" + name +
                    "' is not defined before the node");
      in.push_back(it->second);
    }
    std::vector<ValueShape> out;
    try {
      out = op->shape(in);
    } catch (const std::exception& e) {
      throw Error(n.op_type + " node '" + n.name + "': " + e.what());
    }
    for (size_t i = 0; i < n.outputs.size() && i < out.size(); ++i) {
      if (n.outputs[i].empty()) continue;
      ValueShape& v = out[i];
      v.name = n.outputs[i];
      if (v.ints && static_cast<int64_t>(v.ints->size()) > kMaxTrackedInts) v.ints.reset();
      if (v.floats && static_cast<int64_t>(v.floats->size()) > kMaxTrackedInts) v.floats.reset();
      values[n.outputs[i]] = std::move(v);
    }
  }

  // Commit only now, so that a failure leaves the graph as it was.
  for (const auto& kv : values) {
    auto it = g.tensors.find(kv.first);
    if (it == g.tensors.end()) continue;
    TensorDesc& t = it->second;
    if (t.is_initializer) continue;
    t.shape = make_shape(kv.second.dims);
    t.has_shape = true;
    if (kv.second.dtype != DType::Undefined) t.dtype = kv.second.dtype;
  }
}

void infer_shapes_for_batch(Graph& g, int64_t batch) {
  if (batch <= 0) throw Error("infer_shapes_for_batch: batch must be positive, got " + std::to_string(batch));
  std::map<std::string, std::vector<int64_t>> dims;
  for (const std::string& name : g.inputs) {
    if (!g.has_tensor(name)) throw Error("graph input '" + name + "' has no tensor description");
    const TensorDesc& t = g.tensor(name);
    if (!t.has_shape || t.shape.empty())
      throw Error("input '" + name + "' has no declared batch dimension (shape " +
                  (t.has_shape ? shape_to_string(t.shape) : std::string("unknown")) + ")");
    std::vector<int64_t> d;
    for (size_t i = 0; i < t.shape.size(); ++i) {
      if (i == 0) {
        d.push_back(batch);
      } else if (!t.shape[i].is_known()) {
        throw Error("input '" + name + "' has symbolic dims " + shape_to_string(t.shape) +
                    " besides the batch; give its dims with infer_shapes");
      } else {
        d.push_back(t.shape[i].value);
      }
    }
    dims[name] = d;
  }
  infer_shapes(g, dims);
}

}  // namespace frugal
