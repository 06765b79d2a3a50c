#include "common/layer_graph.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "frugal/error.h"
#include "frugal/plugin_sdk.hpp"

namespace frugal::exec {

namespace {

std::string node_label(const Node& n) { return n.op_type + " node '" + n.name + "'"; }

int64_t default_opset(const Graph& g) {
  for (const OpsetImport& o : g.opsets)
    if (o.domain.empty() || o.domain == "ai.onnx") return o.version;
  return 13;
}

bool default_domain(const Node& n) { return n.domain.empty() || n.domain == "ai.onnx"; }

// The value of a Constant node as a tensor, or nullopt when it uses a form the
// executors do not read (sparse, strings).
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

// Ops that run in place right after their producer and may join its layer.
bool is_epilogue_op(const std::string& t) {
  return t == "BatchNormalization" || t == "Relu" || t == "Clip" || t == "Sigmoid";
}
bool is_passthrough_op(const std::string& t) { return t == "Dropout" || t == "Identity"; }
bool is_epilogue_head(const std::string& t) {
  return t == "Conv" || t == "Gemm" || t == "BatchNormalization";
}

}  // namespace

void LayerGraph::compile(const Graph& g) {
  const int64_t opset = default_opset(g);
  std::vector<std::string> problems;  // every unsupported thing, reported at once

  // Compile-time constants: initializers and Constant node outputs.
  std::map<std::string, TensorDesc> constant_nodes;
  auto constant = [&](const std::string& name) -> const TensorDesc* {
    auto it = constant_nodes.find(name);
    if (it != constant_nodes.end()) return &it->second;
    if (g.is_initializer(name)) return &g.tensor(name);
    return nullptr;
  };

  // How many node inputs read each value (for bundling: a bundled op must be the only reader).
  std::map<std::string, int> readers;
  for (const Node& n : g.nodes)
    for (const std::string& in : n.inputs)
      if (!in.empty()) ++readers[in];
  const std::set<std::string> graph_outputs(g.outputs.begin(), g.outputs.end());

  // Network inputs: float32, known shape, only dim 0 may be symbolic (the batch).
  std::map<std::string, int> act;  // value name -> activation tensor
  std::vector<Dims> dims1;         // dims of each tensor at the probe batch declared+1
  std::vector<bool> probe_ok;
  int64_t n0 = -1;
  bool inputs_share_batch = true;
  for (const std::string& name : g.inputs) {
    const TensorDesc& d = g.tensor(name);
    if (d.dtype != DType::Float32) {
      problems.push_back("input '" + name + "' has dtype " + dtype_name(d.dtype) + " (the " + executor_ +
                         " executor runs float32 only)");
      continue;
    }
    if (!d.has_shape) throw Error("input '" + name + "' has no shape");
    Dims dims;
    bool ok = true;
    for (size_t k = 0; k < d.shape.size(); ++k) {
      if (d.shape[k].is_known())
        dims.push_back(d.shape[k].value);
      else if (k == 0)
        dims.push_back(1);  // symbolic batch: compile for 1 sample
      else {
        problems.push_back("input '" + name + "' has symbolic dimension " + std::to_string(k) +
                           (d.shape[k].symbol.empty() ? "" : " ('" + d.shape[k].symbol + "')") +
                           " (only dim 0, the batch, may be symbolic)");
        ok = false;
      }
    }
    if (!ok) continue;
    if (dims.empty())
      inputs_share_batch = false;
    else if (n0 < 0)
      n0 = dims[0];
    else if (dims[0] != n0)
      inputs_share_batch = false;
    ActivationTensor t;
    t.name = name;
    t.dims = dims;
    t.is_input = true;
    act[name] = int(tensors_.size());
    inputs_.push_back(int(tensors_.size()));
    tensors_.push_back(t);
  }
  declared_batch_ = n0 < 0 ? 1 : n0;
  const int64_t n1 = declared_batch_ + 1;
  if (!inputs_share_batch) {
    batched_ = false;
    not_batched_reason_ = "the inputs do not share a batch dimension";
  }
  std::map<std::string, Dims> at_declared, at_probe;
  for (const ActivationTensor& t : tensors_) {
    Dims d = t.dims;
    if (!d.empty()) d[0] = n1;
    dims1.push_back(d);
    probe_ok.push_back(true);
    at_declared[t.name] = t.dims;
    at_probe[t.name] = d;
  }
  auto report = [&] {
    std::string msg = "the " + executor_ + " executor cannot run " + std::to_string(problems.size()) +
                      " part" + (problems.size() == 1 ? "" : "s") + " of this model: ";
    for (size_t i = 0; i < problems.size(); ++i) msg += (i ? "; " : "") + problems[i];
    throw sdk::Failure(FRUGAL_ERR_UNSUPPORTED, msg);
  };
  if (!problems.empty()) report();  // the nodes below read these inputs
  prepare(g, at_declared, at_probe);

  std::set<std::string> unknown;  // values downstream of something unsupported
  for (const Node& n : g.nodes) {
    if (n.op_type == "Constant" && default_domain(n)) {
      std::optional<TensorDesc> v = constant_value(n);
      if (!v)
        problems.push_back(node_label(n) + ": only tensor, float(s) and int(s) values are supported");
      else
        constant_nodes[n.outputs[0]] = std::move(*v);
      continue;
    }
    const bool known_op = default_domain(n) && op_supported(n.op_type);
    if (!known_op) {
      problems.push_back(n.op_type + (n.domain.empty() ? "" : " (domain " + n.domain + ")") + " (node '" +
                         n.name + "')");
      for (const std::string& o : n.outputs) unknown.insert(o);
      continue;
    }
    bool skip = false;
    for (const std::string& in : n.inputs)
      if (!in.empty() && unknown.count(in)) skip = true;
    for (size_t k = 1; k < n.outputs.size(); ++k) {
      const std::string& o = n.outputs[k];
      if (!o.empty() && (readers.count(o) || graph_outputs.count(o))) {
        problems.push_back(node_label(n) + ": output " + std::to_string(k) + " '" + o + "' is used; the " +
                           executor_ + " executor computes only the first output");
        skip = true;
      }
    }
    if (n.outputs.empty() || n.outputs[0].empty()) throw Error(node_label(n) + ": has no output");
    if (skip) {
      for (const std::string& o : n.outputs) unknown.insert(o);
      continue;
    }

    KernelSpec spec;
    spec.node = &n;
    spec.opset = opset;
    spec.executor = executor_;
    std::vector<Dims> in0, in1;
    std::vector<int> node_inputs;
    bool probe_inputs_ok = true;
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
          if (it == act.end()) throw Error(node_label(n) + ": reads undefined value '" + name + "'");
          id = it->second;
          info.dims = tensors_[size_t(id)].dims;
          if (!probe_ok[size_t(id)]) probe_inputs_ok = false;
        }
      }
      in0.push_back(info.dims);
      in1.push_back(id >= 0 ? dims1[size_t(id)] : info.dims);
      node_inputs.push_back(id);
      spec.inputs.push_back(std::move(info));
    }
    complete_spec(spec);

    try {
      // Bundle into the producer's layer when this op runs in place right after it.
      const int src = node_inputs.empty() ? -1 : node_inputs[0];
      const int producer = src >= 0 ? tensors_[size_t(src)].producer : -1;
      const bool sole_reader = src >= 0 && readers[n.inputs[0]] == 1 && !graph_outputs.count(n.inputs[0]);
      const bool passthrough = is_passthrough_op(n.op_type);
      EpilogueSteps* target = nullptr;
      if (producer >= 0 && sole_reader && layers_[size_t(producer)].output == src && !passthrough &&
          is_epilogue_op(n.op_type) && is_epilogue_head(layers_[size_t(producer)].ops[0]))
        target = bundle_target(producer, n.op_type);
      if (producer >= 0 && sole_reader && layers_[size_t(producer)].output == src &&
          (passthrough || target)) {
        Layer& L = layers_[size_t(producer)];
        const Dims& d = tensors_[size_t(src)].dims;
        if (n.op_type == "BatchNormalization") {
          const int64_t C = product(required_input(spec, 1, "scale").dims);
          if (d.size() < 2 || d[1] != C)
            fail(spec,
                 "scale has " + std::to_string(C) + " values, input " + dims_string(d) + " has " +
                     (d.size() < 2 ? std::string("no channel axis") : std::to_string(d[1]) + " channels"));
        }
        EpilogueSteps scratch;  // passthrough ops add nothing; the call checks them
        append_to_epilogue(spec, passthrough ? scratch : *target);
        L.ops.push_back(n.op_type);
        L.nodes.push_back(n.name);
        tensors_[size_t(src)].name = n.outputs[0];  // the layer now writes this node's output
        act[n.outputs[0]] = src;
        continue;
      }

      const int l = int(layers_.size());
      Layer L;
      L.name = n.name;
      L.ops = {n.op_type};
      L.nodes = {n.name};
      L.node_inputs = node_inputs;
      for (size_t i = 0; i < node_inputs.size(); ++i) {
        L.constant_dims.push_back(node_inputs[i] < 0 ? in0[i] : Dims{});
        if (node_inputs[i] >= 0 &&
            std::find(L.inputs.begin(), L.inputs.end(), node_inputs[i]) == L.inputs.end())
          L.inputs.push_back(node_inputs[i]);
      }
      ActivationTensor out;
      out.name = n.outputs[0];
      out.dims = add_kernel(spec, in0);  // the kernel is layer l's from here on
      out.producer = l;
      // Probe at another batch: does every output keep the batch on axis 0?
      bool ok = probe_inputs_ok;
      Dims d1;
      if (ok) {
        const std::optional<Dims> p = probe_dims(l, spec, in1);
        if (p)
          d1 = *p;
        else
          ok = false;
      }
      if (batched_) {
        std::string why;
        if (!ok)
          why = "its shapes do not follow a change of batch size";
        else if (out.dims.empty() || d1.empty() || out.dims[0] != declared_batch_ || d1[0] != n1 ||
                 !std::equal(out.dims.begin() + 1, out.dims.end(), d1.begin() + 1, d1.end()))
          why = "its output " + dims_string(out.dims) + " does not keep the batch on axis 0";
        else if (mixes_samples(l, in0))
          why = "it combines values of different samples";
        if (!why.empty()) {
          batched_ = false;
          not_batched_reason_ = node_label(n) + ": " + why;
        }
      }
      L.output = int(tensors_.size());
      act[out.name] = L.output;
      tensors_.push_back(out);
      dims1.push_back(d1);
      probe_ok.push_back(ok);
      layers_.push_back(std::move(L));
    } catch (const sdk::Failure& f) {
      if (f.status != FRUGAL_ERR_UNSUPPORTED) throw;
      problems.push_back(f.what());
      for (const std::string& o : n.outputs) unknown.insert(o);
    }
  }

  if (!problems.empty()) report();

  // Outputs, consumers, unique layer names, sample sizes.
  for (const std::string& name : g.outputs) {
    auto it = act.find(name);
    if (it == act.end())
      throw sdk::Failure(FRUGAL_ERR_UNSUPPORTED,
                         "output '" + name + "' is a constant, not computed by any node");
    if (std::find(outputs_.begin(), outputs_.end(), it->second) != outputs_.end())
      throw Error("output '" + name + "' is listed twice");
    outputs_.push_back(it->second);
    tensors_[size_t(it->second)].is_output = true;
    const TensorDesc& declared = g.tensor(name);
    const Dims& got = tensors_[size_t(it->second)].dims;
    if (declared.has_shape) {
      bool same = declared.shape.size() == got.size();
      for (size_t k = 0; same && k < got.size(); ++k)
        same = !declared.shape[k].is_known() || declared.shape[k].value == got[k];
      if (!same)
        throw Error("output '" + name + "' is declared " + shape_to_string(declared.shape) +
                    " but computes to " + dims_string(got));
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
  }
  for (ActivationTensor& t : tensors_) t.sample_elems = batched_ ? product(t.dims, 1) : product(t.dims);
  for (size_t l = 0; l < layers_.size(); ++l) layers_[l].macs_per_sample = macs_per_sample(int(l));
}

int LayerGraph::layer_index(const std::string& name) const {
  for (size_t l = 0; l < layers_.size(); ++l)
    if (layers_[l].name == name) return int(l);
  return -1;
}

Dims LayerGraph::dims_at(int t, int64_t n) const {
  Dims d = tensors_[size_t(t)].dims;
  if (batched_)
    d[0] = n;
  else if (n != 1)
    throw Error("model is not batched (" + not_batched_reason_ + "): only 1 sample, not " +
                std::to_string(n));
  return d;
}

std::vector<Dims> LayerGraph::call_dims(int l, int64_t n) const {
  const Layer& L = layers_[size_t(l)];
  std::vector<Dims> d;
  for (size_t i = 0; i < L.node_inputs.size(); ++i)
    d.push_back(L.node_inputs[i] >= 0 ? dims_at(L.node_inputs[i], n) : L.constant_dims[i]);
  return d;
}

frugal_layer_bytes LayerGraph::layer_bytes(int l, int64_t n) const {
  const Layer& L = layers_[size_t(l)];
  frugal_layer_bytes b{0, 0, 0};
  for (int t : L.inputs) b.in_bytes += bytes(t, n);
  b.out_bytes = bytes(L.output, n);
  b.ws_bytes = workspace_bytes(l, n);
  return b;
}

std::string LayerGraph::tensor_names(const std::vector<int>& ids) const {
  std::string s;
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? ", " : "") + tensors_[size_t(ids[i])].name;
  return s;
}

}  // namespace frugal::exec
