#include "vk_model.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <optional>
#include <set>

#include "frugal/plugin_sdk.hpp"
#include "graph/shape_inference.h"
#include "util/error.h"

namespace frugal::vk {

namespace {

std::string node_label(const Node& n) { return n.op_type + " node '" + n.name + "'"; }

int64_t default_opset(const Graph& g) {
  for (const OpsetImport& o : g.opsets)
    if (o.domain.empty() || o.domain == "ai.onnx") return o.version;
  return 13;
}

// The value of a Constant node, or nullopt for forms this executor does not read.
std::optional<TensorDesc> constant_value(const Node& n) {
  const std::string out = n.outputs.empty() ? std::string() : n.outputs[0];
  auto make = [&](DType t, const std::vector<int64_t>& dims, const void* bytes, size_t size) {
    TensorDesc d;
    d.name = out;
    d.dtype = t;
    d.shape = make_shape(dims);
    d.has_shape = true;
    d.is_initializer = true;
    d.data.resize(size);
    if (size) std::memcpy(d.data.data(), bytes, size);
    return d;
  };
  if (const Attribute* a = n.attr("value"); a && a->t) {
    TensorDesc d = *a->t;
    d.name = out;
    return d;
  }
  if (const Attribute* a = n.attr("value_float")) return make(DType::Float32, {}, &a->f, 4);
  if (const Attribute* a = n.attr("value_floats"))
    return make(DType::Float32, {int64_t(a->floats.size())}, a->floats.data(), a->floats.size() * 4);
  if (const Attribute* a = n.attr("value_int")) return make(DType::Int64, {}, &a->i, 8);
  if (const Attribute* a = n.attr("value_ints"))
    return make(DType::Int64, {int64_t(a->ints.size())}, a->ints.data(), a->ints.size() * 8);
  return std::nullopt;
}

bool is_epilogue_op(const std::string& t) {
  return t == "BatchNormalization" || t == "Relu" || t == "Clip" || t == "Sigmoid";
}
bool is_passthrough_op(const std::string& t) { return t == "Dropout" || t == "Identity"; }
bool is_epilogue_head(const std::string& t) { return t == "Conv" || t == "Gemm" || t == "BatchNormalization"; }
bool default_domain(const Node& n) { return n.domain.empty() || n.domain == "ai.onnx"; }

Dims value_dims(const Graph& g, const std::string& name) {
  const TensorDesc& t = g.tensor(name);
  if (!t.has_shape || !shape_is_known(t.shape)) throw Error("value '" + name + "' has no known shape after inference");
  return known_dims(t.shape);
}

}  // namespace

Model::Model(const Graph& g) {
  const int64_t opset = default_opset(g);
  std::vector<std::string> problems;  // every unsupported thing, reported at once

  // Ops first: shape inference cannot run over ops it does not know.
  for (const Node& n : g.nodes) {
    if (n.op_type == "Constant" && default_domain(n)) continue;
    if (!default_domain(n) || !op_is_supported(n.op_type))
      problems.push_back(n.op_type + (n.domain.empty() ? "" : " (domain " + n.domain + ")") + " (node '" + n.name + "')");
  }
  if (!problems.empty()) {
    std::string msg = "the vulkan executor cannot run " + std::to_string(problems.size()) + " node" +
                      (problems.size() == 1 ? "" : "s") + " of this model: ";
    for (size_t i = 0; i < problems.size(); ++i) msg += (i ? ", " : "") + problems[i];
    throw sdk::Failure(FRUGAL_ERR_UNSUPPORTED, msg);
  }

  // Network inputs: float32, known shape, only dim 0 may be symbolic (the batch).
  std::map<std::string, int> act;
  std::map<std::string, Dims> dims0, dims1;  // input dims at the declared batch D and at D + 1
  int64_t n0 = -1;
  bool inputs_share_batch = true;
  for (const std::string& name : g.inputs) {
    const TensorDesc& d = g.tensor(name);
    if (d.dtype != DType::Float32) {
      problems.push_back("input '" + name + "' has dtype " + dtype_name(d.dtype) + " (the vulkan executor runs float32 only)");
      continue;
    }
    if (!d.has_shape) throw Error("input '" + name + "' has no shape");
    Dims dims;
    for (size_t k = 0; k < d.shape.size(); ++k) {
      if (d.shape[k].is_known()) dims.push_back(d.shape[k].value);
      else if (k == 0) dims.push_back(1);  // symbolic batch: compile for 1 sample
      else
        throw sdk::Failure(FRUGAL_ERR_UNSUPPORTED, "input '" + name + "' has symbolic dimension " + std::to_string(k) +
                                                       " (only dim 0, the batch, may be symbolic)");
    }
    if (dims.empty()) inputs_share_batch = false;
    else if (n0 < 0) n0 = dims[0];
    else if (dims[0] != n0) inputs_share_batch = false;
    ActivationTensor t;
    t.name = name;
    t.dims = dims;
    t.is_input = true;
    act[name] = int(tensors_.size());
    inputs_.push_back(int(tensors_.size()));
    tensors_.push_back(t);
    dims0[name] = dims;
  }
  if (!problems.empty()) throw sdk::Failure(FRUGAL_ERR_UNSUPPORTED, "the vulkan executor cannot run this model: " + problems[0]);
  declared_batch_ = n0 < 0 ? 1 : n0;
  if (!inputs_share_batch) {
    batched_ = false;
    not_batched_reason_ = "the inputs do not share a batch dimension";
  }
  for (const auto& kv : dims0) {
    Dims d = kv.second;
    if (!d.empty()) d[0] = declared_batch_ + 1;
    dims1[kv.first] = d;
  }

  // Shapes of every value at D (required) and at D + 1 (the batch probe). The
  // host's op table lacks Sub, Div and GlobalMaxPool; their shapes follow Add's
  // and GlobalAveragePool's, so the copies used for inference say so.
  Graph g0 = g;
  for (Node& n : g0.nodes) {
    if (n.op_type == "Sub" || n.op_type == "Div") n.op_type = "Add";
    if (n.op_type == "GlobalMaxPool") n.op_type = "GlobalAveragePool";
  }
  Graph g1 = g0;
  infer_shapes(g0, dims0);
  bool probe_ok = batched_;
  if (probe_ok) {
    try {
      infer_shapes(g1, dims1);
    } catch (const Error& e) {
      probe_ok = false;
      batched_ = false;
      not_batched_reason_ = std::string("its shapes do not follow a change of batch size (") + e.what() + ")";
    }
  }
  if (probe_ok) {  // every activation must carry the batch on axis 0
    for (const Node& n : g.nodes) {
      if (n.op_type == "Constant" || n.outputs.empty() || n.outputs[0].empty()) continue;
      const Dims a = value_dims(g0, n.outputs[0]), b = value_dims(g1, n.outputs[0]);
      if (a.empty() || b.empty() || a[0] != declared_batch_ || b[0] != declared_batch_ + 1 ||
          !std::equal(a.begin() + 1, a.end(), b.begin() + 1, b.end())) {
        batched_ = false;
        not_batched_reason_ = node_label(n) + ": its output " + dims_string(a) + " does not keep the batch on axis 0";
        break;
      }
    }
  }
  const bool shapes_batched = batched_;

  // Compile-time constants: initializers and Constant node outputs.
  std::map<std::string, TensorDesc> constant_nodes;
  auto constant = [&](const std::string& name) -> const TensorDesc* {
    auto it = constant_nodes.find(name);
    if (it != constant_nodes.end()) return &it->second;
    if (g.is_initializer(name)) return &g.tensor(name);
    return nullptr;
  };
  std::map<std::string, int> readers;
  for (const Node& n : g.nodes)
    for (const std::string& in : n.inputs)
      if (!in.empty()) ++readers[in];
  const std::set<std::string> graph_outputs(g.outputs.begin(), g.outputs.end());

  for (const Node& n : g.nodes) {
    if (n.op_type == "Constant") {
      std::optional<TensorDesc> v = constant_value(n);
      if (!v) problems.push_back(node_label(n) + ": only tensor, float(s) and int(s) values are supported");
      else constant_nodes[n.outputs[0]] = std::move(*v);
      continue;
    }
    if (n.outputs.empty() || n.outputs[0].empty()) throw Error(node_label(n) + ": has no output");
    bool skip = false;
    for (size_t k = 1; k < n.outputs.size(); ++k) {
      const std::string& o = n.outputs[k];
      if (!o.empty() && (readers.count(o) || graph_outputs.count(o))) {
        problems.push_back(node_label(n) + ": output " + std::to_string(k) + " '" + o +
                           "' is used; the vulkan executor computes only the first output");
        skip = true;
      }
    }
    KernelSpec spec;
    spec.node = &n;
    spec.opset = opset;
    spec.batched = shapes_batched;
    spec.output = value_dims(g0, n.outputs[0]);
    std::vector<int> node_inputs;
    for (const std::string& name : n.inputs) {
      InputInfo info;
      info.name = name;
      int id = -1;
      if (!name.empty()) {
        info.present = true;
        if (const TensorDesc* c = constant(name)) {
          info.constant = true;
          info.value = c;
          info.dtype = c->dtype;
          if (!c->has_shape) throw Error(node_label(n) + ": constant '" + name + "' has no shape");
          info.dims = known_dims(c->shape);
        } else {
          auto it = act.find(name);
          if (it == act.end()) {
            skip = true;  // downstream of something already reported
            break;
          }
          id = it->second;
          info.dims = tensors_[size_t(id)].dims;
          info.dtype = DType::Float32;
        }
      }
      node_inputs.push_back(id);
      spec.inputs.push_back(std::move(info));
    }
    if (skip) continue;

    try {
      // Bundle into the producer's layer when this op runs in place right after it.
      const int src = node_inputs.empty() ? -1 : node_inputs[0];
      const int producer = src >= 0 ? tensors_[size_t(src)].producer : -1;
      const bool sole_reader = src >= 0 && readers[n.inputs[0]] == 1 && !graph_outputs.count(n.inputs[0]);
      const bool passthrough = is_passthrough_op(n.op_type);
      if (producer >= 0 && sole_reader && layers_[size_t(producer)].output == src) {
        Layer& L = layers_[size_t(producer)];
        Epilogue* e = L.kernel->epilogue();
        const bool joins = passthrough || (is_epilogue_op(n.op_type) && is_epilogue_head(L.ops[0]) && e &&
                                           e->has_room(n.op_type == "BatchNormalization"));
        if (joins) {
          const Dims& d = tensors_[size_t(src)].dims;
          if (n.op_type == "BatchNormalization") {
            const int64_t C = product(required_input(spec, 1, "scale").dims);
            if (d.size() < 2 || d[1] != C)
              fail(spec, "scale has " + std::to_string(C) + " values, input " + dims_string(d) + " has " +
                             (d.size() < 2 ? std::string("no channel axis") : std::to_string(d[1]) + " channels"));
          }
          Epilogue scratch;
          append_to_epilogue(spec, passthrough ? scratch : *e);
          L.ops.push_back(n.op_type);
          L.nodes.push_back(n.name);
          tensors_[size_t(src)].name = n.outputs[0];  // the layer now writes this node's output
          act[n.outputs[0]] = src;
          continue;
        }
      }

      Layer L;
      L.kernel = make_kernel(spec);
      L.name = n.name;
      L.ops = {n.op_type};
      L.nodes = {n.name};
      L.node_inputs = node_inputs;
      for (int id : node_inputs)
        if (id >= 0 && std::find(L.inputs.begin(), L.inputs.end(), id) == L.inputs.end()) L.inputs.push_back(id);
      if (batched_ && L.kernel->mixes_samples()) {
        batched_ = false;
        not_batched_reason_ = node_label(n) + ": it combines values of different samples";
      }
      ActivationTensor out;
      out.name = n.outputs[0];
      out.dims = spec.output;
      out.producer = int(layers_.size());
      L.output = int(tensors_.size());
      act[out.name] = L.output;
      tensors_.push_back(out);
      layers_.push_back(std::move(L));
    } catch (const sdk::Failure& f) {
      if (f.status != FRUGAL_ERR_UNSUPPORTED) throw;
      problems.push_back(f.what());
    }
  }

  if (!problems.empty()) {
    std::string msg = "the vulkan executor cannot run " + std::to_string(problems.size()) + " part" +
                      (problems.size() == 1 ? "" : "s") + " of this model: ";
    for (size_t i = 0; i < problems.size(); ++i) msg += (i ? "; " : "") + problems[i];
    throw sdk::Failure(FRUGAL_ERR_UNSUPPORTED, msg);
  }

  for (const std::string& name : g.outputs) {
    auto it = act.find(name);
    if (it == act.end())
      throw sdk::Failure(FRUGAL_ERR_UNSUPPORTED, "output '" + name + "' is a constant, not computed by any node");
    if (std::find(outputs_.begin(), outputs_.end(), it->second) != outputs_.end())
      throw Error("output '" + name + "' is listed twice");
    outputs_.push_back(it->second);
    tensors_[size_t(it->second)].is_output = true;
    const TensorDesc& declared = g.tensor(name);
    const Dims& got = tensors_[size_t(it->second)].dims;
    if (declared.has_shape) {
      bool same = declared.shape.size() == got.size();
      for (size_t k = 0; same && k < got.size(); ++k) same = !declared.shape[k].is_known() || declared.shape[k].value == got[k];
      if (!same)
        throw Error("output '" + name + "' is declared " + shape_to_string(declared.shape) + " but computes to " + dims_string(got));
    }
  }
  std::set<std::string> names;
  for (size_t l = 0; l < layers_.size(); ++l) {
    Layer& L = layers_[l];
    if (L.name.empty()) L.name = L.ops[0] + "_" + std::to_string(l);
    std::string name = L.name;
    for (int k = 2; names.count(name); ++k) name = L.name + "_" + std::to_string(k);
    L.name = name;
    names.insert(name);
    for (int t : L.inputs) tensors_[size_t(t)].consumers.push_back(int(l));
    L.macs_per_sample = L.kernel->macs_per_sample();
  }
  for (ActivationTensor& t : tensors_) t.sample_elems = batched_ ? product(t.dims, 1) : product(t.dims);
}

int Model::layer_index(const std::string& name) const {
  for (size_t l = 0; l < layers_.size(); ++l)
    if (layers_[l].name == name) return int(l);
  return -1;
}

Dims Model::dims_at(int t, int64_t n) const {
  Dims d = tensors_[size_t(t)].dims;
  if (batched_) d[0] = n;
  else if (n != 1) throw Error("model is not batched (" + not_batched_reason_ + "): only 1 sample, not " + std::to_string(n));
  return d;
}

frugal_layer_bytes Model::layer_bytes(int l, int64_t n) const {
  const Layer& L = layers_[size_t(l)];
  frugal_layer_bytes b{0, 0, 0};
  for (int t : L.inputs) b.in_bytes += bytes(t, n);
  b.out_bytes = bytes(L.output, n);
  b.ws_bytes = L.kernel->workspace_bytes(n);
  return b;
}

}  // namespace frugal::vk
