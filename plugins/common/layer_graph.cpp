#include "common/layer_graph.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "frugal/error.h"
#include "frugal/model/ops.h"
#include "frugal/model/ops/conv.h"
#include "frugal/model/ops/elementwise.h"
#include "frugal/model/ops/matmul.h"
#include "frugal/model/ops/normalization.h"
#include "frugal/plugin_sdk.hpp"

namespace frugal::exec {

// One node's op and its output shapes at the declared batch and at the batch
// probe (declared + 1), from the shape pass.
struct NodeShapes {
  std::unique_ptr<Op> op;  // null: unknown op, Constant node, or inputs without shapes
  std::string error;       // the op refused the node's attributes or input shapes (a malformed model)
  std::vector<ValueShape> out0, out1;
  bool probe_ok = false;  // the shapes at the probe batch could be computed
};

// What one compile() has seen so far.
struct CompileState {
  explicit CompileState(const Graph& g) : graph(g), opset(default_opset(g)) {}
  const Graph& graph;
  const int64_t opset;
  std::vector<std::string> problems;                 // every unsupported thing, reported at once
  std::map<std::string, TensorDesc> constant_nodes;  // Constant node outputs
  std::map<std::string, int> readers;                // node inputs reading each value
  std::set<std::string> graph_outputs;
  std::map<std::string, int> act;                 // value name -> activation tensor
  std::vector<Dims> dims1;                        // per tensor: dims at the probe batch
  std::vector<bool> probe_ok;                     // per tensor
  std::set<std::string> unknown;                  // values downstream of something unsupported
  std::vector<NodeShapes> shapes;                 // per node
  bool shapes_batched = true;                     // every activation keeps the batch on axis 0
  std::map<std::string, std::string> swish;       // Swish pairs: Sigmoid node -> its Mul node
  std::set<std::string> swish_muls;               // their Mul nodes, while the Sigmoid may join
  std::map<std::string, std::string> scale_muls;  // find_input_scales: a Mul -> the 1x1 Conv reading it
  struct PendingScale {
    int scale = -1;   // the [N, C, 1, 1] tensor
    std::string mul;  // the absorbed Mul node
  };
  std::map<std::string, PendingScale> pending_scales;  // Conv node -> the scale its layer takes

  // Compile-time constants: initializers and Constant node outputs.
  const TensorDesc* constant(const std::string& name) const {
    auto it = constant_nodes.find(name);
    if (it != constant_nodes.end()) return &it->second;
    return graph.is_initializer(name) ? &graph.tensor(name) : nullptr;
  }
  [[noreturn]] void report(const std::string& executor) const {
    std::string msg = "the " + executor + " executor cannot run " + std::to_string(problems.size()) +
                      " part" + (problems.size() == 1 ? "" : "s") + " of this model: ";
    for (size_t i = 0; i < problems.size(); ++i) msg += (i ? "; " : "") + problems[i];
    throw sdk::Failure(FRUGAL_ERR_UNSUPPORTED, msg);
  }
};

namespace {

std::string node_label(const Node& n) { return n.op_type + " node '" + n.name + "'"; }

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

// Layers whose epilogue BatchNormalization and activations after them join.
bool is_epilogue_head(const Op& op) {
  return dynamic_cast<const ops::Conv*>(&op) || dynamic_cast<const ops::Gemm*>(&op) ||
         dynamic_cast<const ops::BatchNormalization*>(&op);
}

// An Add (the residual join) also takes the BN / activations after it where the
// backend's Add kernel offers an epilogue (both do): Add + Relu in one pass.
// Swish stays apart there: only the CPU executor fuses it, and both executors
// must compile a model into the same layers.
bool takes_epilogue(const Op& op) { return is_epilogue_head(op) || dynamic_cast<const ops::Add*>(&op); }

// Small constants carry their values to the shape functions (Reshape's shape, Resize's scales).
ValueShape constant_shape(const TensorDesc& t) {
  ValueShape v;
  v.name = t.name;
  v.present = true;
  v.dims = known_dims(t.shape);
  v.dtype = t.dtype;
  if (element_count(v.dims) > 1024) return v;
  if (t.dtype == DType::Int64 || t.dtype == DType::Int32) v.ints = t.as_int64();
  if (t.dtype == DType::Float32 || t.dtype == DType::Float64) {
    const std::vector<float> f = t.as_float();
    v.floats = std::vector<double>(f.begin(), f.end());
  }
  return v;
}

// Dims `d` with the batch (dim 0) set to n.
Dims with_batch(Dims d, int64_t n) {
  if (!d.empty()) d[0] = n;
  return d;
}

}  // namespace

void LayerGraph::compile(const Graph& g) { compile_graph(g, nullptr); }

void LayerGraph::compile(Graph&& g) {
  compile_graph(g, &g);
  g = Graph();
}

// `consumed` (g itself, or nullptr): its initializers are freed after their last reader.
void LayerGraph::compile_graph(const Graph& g, Graph* consumed) {
  CompileState c(g);
  for (const Node& n : g.nodes)
    for (const std::string& in : n.inputs)
      if (!in.empty()) ++c.readers[in];
  c.graph_outputs.insert(g.outputs.begin(), g.outputs.end());
  add_inputs(g, c);
  if (!c.problems.empty()) c.report(executor_);  // the nodes below read these inputs
  infer_node_shapes(g, c);
  if (runs_gates()) find_model_gates(g);
  if (fuses_swish()) find_swish(g, c);
  find_input_scales(g, c);
  std::map<std::string, int> unread = c.readers;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    compile_node(g.nodes[i], i, c);
    if (!consumed) continue;
    for (const std::string& in : g.nodes[i].inputs)
      if (!in.empty() && --unread[in] == 0 && g.is_initializer(in) && !c.graph_outputs.count(in))
        std::vector<uint8_t>().swap(consumed->tensors.at(in).data);
  }
  if (!c.problems.empty()) c.report(executor_);
  add_outputs(g, c);
  finish();
  mark_gate_layers();
}

// Network inputs: float32, known shape, only dim 0 may be symbolic (the batch).
void LayerGraph::add_inputs(const Graph& g, CompileState& c) {
  int64_t n0 = -1;
  bool inputs_share_batch = true;
  for (const std::string& name : g.inputs) {
    const TensorDesc& d = g.tensor(name);
    if (d.dtype != DType::Float32) {
      c.problems.push_back("input '" + name + "' has dtype " + dtype_name(d.dtype) + " (the " + executor_ +
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
        c.problems.push_back("input '" + name + "' has symbolic dimension " + std::to_string(k) +
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
    c.act[name] = int(tensors_.size());
    inputs_.push_back(int(tensors_.size()));
    tensors_.push_back(t);
  }
  declared_batch_ = n0 < 0 ? 1 : n0;
  if (!inputs_share_batch) {
    batched_ = false;
    not_batched_reason_ = "the inputs do not share a batch dimension";
  }
  for (const ActivationTensor& t : tensors_) {
    c.dims1.push_back(with_batch(t.dims, declared_batch_ + 1));
    c.probe_ok.push_back(true);
  }
}

namespace {

// Shapes of every value at the declared batch (v0) and at the probe batch (v1);
// values in probe_bad have no probe shapes.
struct ValueShapes {
  std::map<std::string, ValueShape> v0, v1;
  std::set<std::string> probe_bad;
};

// Node n's op and output shapes from its inputs' shapes; leaves `ns` without an
// op when an input has no shape (unknown upstream) or the op refuses the node.
void shape_node(const Node& n, int64_t opset, ValueShapes& vs, NodeShapes& ns) {
  std::vector<ValueShape> in0, in1;
  bool probe_ok = true;
  for (const std::string& name : n.inputs) {
    if (name.empty()) {
      in0.emplace_back();
      in1.emplace_back();
      continue;
    }
    auto it = vs.v0.find(name);
    if (it == vs.v0.end()) return;
    in0.push_back(it->second);
    in1.push_back(vs.v1[name]);
    if (vs.probe_bad.count(name)) probe_ok = false;
  }
  try {
    ns.op = make_op(n, opset);
    ns.out0 = ns.op->shape(in0);
  } catch (const std::exception& e) {
    ns.op.reset();
    const std::string what = e.what();
    ns.error = what.rfind(node_label(n), 0) == 0 ? what : node_label(n) + ": " + what;
    return;
  }
  try {
    if (probe_ok) ns.out1 = ns.op->shape(in1);
  } catch (const std::exception&) {
    probe_ok = false;  // its shapes do not follow a change of batch
  }
  ns.probe_ok = probe_ok;
  for (size_t k = 0; k < n.outputs.size() && k < ns.out0.size(); ++k) {
    const std::string& o = n.outputs[k];
    if (o.empty()) continue;
    ns.out0[k].name = o;
    vs.v0[o] = ns.out0[k];
    if (!probe_ok) {
      vs.probe_bad.insert(o);
      continue;
    }
    ns.out1[k].name = o;
    vs.v1[o] = ns.out1[k];
  }
}

// Whether node output `ns` keeps the batch on axis 0 (declared batch n0, probe n0 + 1).
bool keeps_batch(const NodeShapes& ns, int64_t n0) {
  if (!ns.probe_ok) return false;
  const Dims &d0 = ns.out0[0].dims, &d1 = ns.out1[0].dims;
  return !d0.empty() && !d1.empty() && d0[0] == n0 && d1[0] == n0 + 1 &&
         std::equal(d0.begin() + 1, d0.end(), d1.begin() + 1, d1.end());
}

}  // namespace

// Every node's op and output shapes at the declared batch and at declared + 1,
// before any kernel is built: kernels learn whether the model is batched.
void LayerGraph::infer_node_shapes(const Graph& g, CompileState& c) const {
  ValueShapes vs;
  for (const ActivationTensor& t : tensors_) {
    ValueShape v;
    v.name = t.name;
    v.present = true;
    v.dtype = t.dtype;
    v.dims = t.dims;
    vs.v0[t.name] = v;
    v.dims = with_batch(t.dims, declared_batch_ + 1);
    vs.v1[t.name] = v;
  }
  for (const auto& kv : g.tensors)
    if (kv.second.is_initializer && kv.second.has_shape)
      vs.v0[kv.first] = vs.v1[kv.first] = constant_shape(kv.second);
  c.shapes_batched = batched_;
  c.shapes.resize(g.nodes.size());
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    if (n.op_type == "Constant" && default_domain(n)) {
      if (std::optional<TensorDesc> v = constant_value(n); v && v->has_shape)
        vs.v0[v->name] = vs.v1[v->name] = constant_shape(*v);
      continue;
    }
    if (!find_op(n)) continue;  // unknown: its outputs stay without shapes
    shape_node(n, c.opset, vs, c.shapes[i]);
    if (c.shapes[i].op && !keeps_batch(c.shapes[i], declared_batch_)) c.shapes_batched = false;
  }
}

void LayerGraph::compile_node(const Node& n, size_t index, CompileState& c) {
  if (n.op_type == "Constant" && default_domain(n)) {
    std::optional<TensorDesc> v = constant_value(n);
    if (!v)
      c.problems.push_back(node_label(n) + ": only tensor, float(s) and int(s) values are supported");
    else
      c.constant_nodes[n.outputs[0]] = std::move(*v);
    return;
  }
  if (compile_gate_node(n, c)) return;
  if (!default_domain(n) || !op_supported(n.op_type)) {
    c.problems.push_back(n.op_type + (n.domain.empty() ? "" : " (domain " + n.domain + ")") + " (node '" +
                         n.name + "')");
    for (const std::string& o : n.outputs) c.unknown.insert(o);
    return;
  }
  bool skip = false;
  for (const std::string& in : n.inputs)
    if (!in.empty() && c.unknown.count(in)) skip = true;
  for (size_t k = 1; k < n.outputs.size(); ++k) {
    const std::string& o = n.outputs[k];
    if (!o.empty() && (c.readers.count(o) || c.graph_outputs.count(o))) {
      c.problems.push_back(node_label(n) + ": output " + std::to_string(k) + " '" + o + "' is used; the " +
                           executor_ + " executor computes only the first output");
      skip = true;
    }
  }
  if (n.outputs.empty() || n.outputs[0].empty()) throw Error(node_label(n) + ": has no output");
  if (skip) {
    for (const std::string& o : n.outputs) c.unknown.insert(o);
    return;
  }
  NodeShapes& shapes = c.shapes[index];
  std::vector<int> node_inputs;
  const KernelSpec spec = make_spec(n, shapes, node_inputs, c);
  if (absorb_input_scale(n, spec, node_inputs, c)) return;
  try {
    if (!try_bundle(n, spec, node_inputs, c)) {
      add_layer(n, spec, node_inputs, shapes, c);
      join_input_scale_of(n, c);
    }
  } catch (const sdk::Failure& f) {
    if (f.status != FRUGAL_ERR_UNSUPPORTED) throw;
    c.problems.push_back(f.what());
    for (const std::string& o : n.outputs) c.unknown.insert(o);
  }
}

// The spec of node n: its op, its inputs (activation tensors in node_inputs, -1
// for constants and omitted inputs) and its output at the declared batch.
KernelSpec LayerGraph::make_spec(const Node& n, const NodeShapes& shapes, std::vector<int>& node_inputs,
                                 CompileState& c) const {
  KernelSpec spec;
  spec.node = &n;
  spec.opset = c.opset;
  spec.executor = executor_;
  for (const std::string& name : n.inputs) {
    InputInfo info;
    info.name = name;
    int id = -1;
    if (!name.empty()) {
      info.present = true;
      if (const TensorDesc* v = c.constant(name)) {
        info.constant = true;
        info.value = v;
        info.dtype = v->dtype;
        if (!v->has_shape) throw Error(node_label(n) + ": constant '" + name + "' has no shape");
        info.dims = known_dims(v->shape);
      } else {
        auto it = c.act.find(name);
        if (it == c.act.end()) throw Error(node_label(n) + ": reads undefined value '" + name + "'");
        id = it->second;
        info.dims = tensors_[size_t(id)].dims;
        info.dtype = tensors_[size_t(id)].dtype;
      }
    }
    node_inputs.push_back(id);
    spec.inputs.push_back(std::move(info));
  }
  if (!shapes.error.empty()) throw Error(shapes.error);
  if (!shapes.op) throw Error(node_label(n) + ": its output shapes are unknown");
  spec.op = shapes.op.get();
  spec.output = shapes.out0[0].dims;
  spec.output_dtype = shapes.out0[0].dtype;
  spec.batched = c.shapes_batched;
  attach_gate(n, spec);
  complete_spec(spec);
  return spec;
}

// A gate's nodes are computed inside its gated conv's layer: the gate itself
// (read from the model when the conv's kernel is made), and the Mul, whose
// output the conv's layer writes from then on.
bool LayerGraph::compile_gate_node(const Node& n, CompileState& c) {
  if (gate_state_.absorbed.count(n.name)) return true;
  auto it = gate_state_.by_mul.find(n.name);
  if (it == gate_state_.by_mul.end()) return false;
  const GateMatch& m = *it->second;
  for (const std::string& in : n.inputs) {
    auto t = c.act.find(in);
    if (t == c.act.end()) continue;  // the mask: never an activation
    const int p = tensors_[size_t(t->second)].producer;
    if (p < 0 || layers_[size_t(p)].nodes[0] != m.conv || layers_[size_t(p)].output != t->second)
      throw Error(node_label(n) + ": the gate's Mul does not follow its conv '" + m.conv + "' in one layer");
    Layer& L = layers_[size_t(p)];
    L.ops.push_back(n.op_type);
    L.nodes.push_back(n.name);
    L.gate_kernels = m.channels;
    L.gate_threshold = gate_state_.params.at(m.conv)->threshold;
    L.gate_macs_per_sample = m.channels * m.input_channels;
    tensors_[size_t(t->second)].name = n.outputs[0];
    c.act[n.outputs[0]] = t->second;
    return true;
  }
  throw Error(node_label(n) + ": the gate's Mul reads no computed value");
}

// Swish pairs: Sigmoid(t) -> s and Mul(t, s), where t and s have no other
// readers and are no graph outputs (EfficientNet's SiLU as torchvision exports it).
void LayerGraph::find_swish(const Graph& g, CompileState& c) const {
  std::map<std::string, const Node*> mul_of;  // a Mul's inputs, as "a|b", both orders
  for (const Node& n : g.nodes)
    if (n.op_type == "Mul" && default_domain(n) && n.inputs.size() == 2) {
      mul_of[n.inputs[0] + "|" + n.inputs[1]] = &n;
      mul_of[n.inputs[1] + "|" + n.inputs[0]] = &n;
    }
  const auto alone = [&](const std::string& v, int readers) {
    return !v.empty() && c.readers[v] == readers && !c.graph_outputs.count(v);
  };
  for (const Node& n : g.nodes) {
    if (n.op_type != "Sigmoid" || !default_domain(n) || n.inputs.size() != 1 || n.outputs.size() != 1)
      continue;
    const std::string &t = n.inputs[0], &s = n.outputs[0];
    auto m = mul_of.find(t + "|" + s);
    if (t == s || m == mul_of.end() || !alone(t, 2) || !alone(s, 1)) continue;
    c.swish[n.name] = m->second->name;
    c.swish_muls.insert(m->second->name);
  }
}

// Node n of a Swish pair into its producer's layer (see find_swish): the Sigmoid
// adds the Swish step, the Mul then only renames the layer's output. False when
// n is not in a pair (or its Sigmoid could not join: then the Mul is a layer).
bool LayerGraph::try_bundle_swish(const Node& n, const std::vector<int>& node_inputs, CompileState& c) {
  const bool sigmoid = c.swish.count(n.name) > 0, mul = c.swish_muls.count(n.name) > 0;
  if (!sigmoid && !mul) return false;
  const int src = node_inputs.empty() ? -1 : node_inputs[0];
  const int producer = src >= 0 ? tensors_[size_t(src)].producer : -1;
  const bool joins = producer >= 0 && layers_[size_t(producer)].output == src &&
                     (!mul || (node_inputs.size() == 2 && node_inputs[1] == src));
  EpilogueSteps* target = nullptr;
  if (joins && sigmoid && is_epilogue_head(*layer_ops_[size_t(producer)]))
    target = bundle_target(producer, "Sigmoid");
  if (sigmoid && !target) {
    c.swish_muls.erase(c.swish[n.name]);  // its Mul stays a layer of its own
    return false;
  }
  if (!joins) return false;
  if (target) target->add_swish();
  Layer& L = layers_[size_t(producer)];
  L.ops.push_back(n.op_type);
  L.nodes.push_back(n.name);
  c.act[n.outputs[0]] = src;
  if (mul) tensors_[size_t(src)].name = n.outputs[0];  // the layer now writes the Mul's output
  return true;
}

// Channel-scale Muls (squeeze-and-excite's x * s, s of one value per sample
// and channel) whose only reader is a 1x1, stride-1, unpadded, ungrouped Conv
// on the Mul's output that the backend scales (fuses_input_scale): that conv's
// layer can read x and s itself, so the Mul's pass over x and its output go.
void LayerGraph::find_input_scales(const Graph& g, CompileState& c) const {
  std::map<std::string, const Node*> reader_of;  // values read once -> that node
  for (const Node& n : g.nodes)
    for (const std::string& in : n.inputs)
      if (!in.empty() && c.readers[in] == 1) reader_of[in] = &n;
  const auto all = [](const std::vector<int64_t>& v, int64_t x) {
    return std::all_of(v.begin(), v.end(), [x](int64_t e) { return e == x; });
  };
  for (const Node& n : g.nodes) {
    if (n.op_type != "Mul" || !default_domain(n) || n.inputs.size() != 2 || n.outputs.size() != 1) continue;
    if (c.swish_muls.count(n.name) || gate_state_.by_mul.count(n.name)) continue;
    const std::string& out = n.outputs[0];
    auto r = reader_of.find(out);
    if (r == reader_of.end() || c.graph_outputs.count(out)) continue;
    const Node& conv = *r->second;
    if (conv.op_type != "Conv" || !default_domain(conv) || conv.inputs.size() < 2 || conv.inputs[0] != out)
      continue;
    if (gate_state_.params.count(conv.name) || gate_state_.consumers.count(conv.name)) continue;
    const TensorDesc* w = c.constant(conv.inputs[1]);
    if (!w || !w->has_shape || w->shape.size() != 4) continue;
    const std::vector<int64_t> wd = known_dims(w->shape);
    const std::string pad = conv.attr_string("auto_pad", "NOTSET");
    if (wd[2] != 1 || wd[3] != 1 || conv.attr_int("group", 1) != 1 ||
        !all(conv.attr_ints("strides", {}), 1) || !all(conv.attr_ints("pads", {}), 0) ||
        (pad != "NOTSET" && pad != "VALID") || !fuses_input_scale(wd[0]))
      continue;
    c.scale_muls[n.name] = conv.name;
  }
}

// A Mul found by find_input_scales joins its conv when, by the shapes, it
// scales x [N, C, H, W] (H x W >= 8: planes the packed tile takes) by s
// [N, C, 1, 1]: its output is x for the conv from here on, which takes s
// (join_input_scale_of). True: n is absorbed, no layer of its own.
bool LayerGraph::absorb_input_scale(const Node& n, const KernelSpec& spec,
                                    const std::vector<int>& node_inputs, CompileState& c) {
  auto it = c.scale_muls.find(n.name);
  if (it == c.scale_muls.end() || node_inputs.size() != 2) return false;
  const Dims& out = spec.output;
  if (out.size() != 4 || out[2] * out[3] < 8) return false;
  for (int k = 0; k < 2; ++k) {
    const int x = node_inputs[size_t(k)], s = node_inputs[size_t(1 - k)];
    if (x < 0 || s < 0 || x == s) return false;
    const ActivationTensor &tx = tensors_[size_t(x)], &ts = tensors_[size_t(s)];
    if (tx.dims != out || ts.dims != Dims{out[0], out[1], 1, 1}) continue;
    if (tx.dtype != DType::Float32 || ts.dtype != DType::Float32) return false;
    c.act[n.outputs[0]] = x;
    c.pending_scales[it->second] = {s, n.name};
    return true;
  }
  return false;
}

// The layer just added for conv n takes the scale of the Mul absorbed before
// it as its next node input (after the conv's own, before any residual).
void LayerGraph::join_input_scale_of(const Node& n, CompileState& c) {
  auto it = c.pending_scales.find(n.name);
  if (it == c.pending_scales.end()) return;
  const int l = int(layers_.size()) - 1;
  if (l < 0 || layers_[size_t(l)].nodes[0] != n.name || !join_input_scale(l))
    throw Error(node_label(n) + ": its kernel does not take the scale of Mul node '" + it->second.mul +
                "', which was joined to it");
  Layer& L = layers_[size_t(l)];
  const int s = it->second.scale;
  L.ops.push_back("Mul");
  L.nodes.push_back(it->second.mul);
  L.node_inputs.push_back(s);
  L.constant_dims.push_back(Dims{});
  if (std::find(L.inputs.begin(), L.inputs.end(), s) == L.inputs.end()) L.inputs.push_back(s);
}

// A residual Add joins the layer computed right before it, when that layer
// produced one operand (read by nothing else) and the other operand has the
// same shape: the layer adds it in its epilogue, so the sum is written once and
// the Add's pass over three tensors goes. Gated layers and gate consumers keep
// their Adds apart (their kernels take no residual).
bool LayerGraph::try_bundle_residual(const Node& n, const KernelSpec& spec,
                                     const std::vector<int>& node_inputs, CompileState& c) {
  if (n.op_type != "Add" || !fuses_residual_add() || node_inputs.size() != 2 || layers_.empty()) return false;
  const int last = int(layers_.size()) - 1;
  Layer& L = layers_[size_t(last)];
  for (int k = 0; k < 2; ++k) {
    const int src = node_inputs[size_t(k)], skip = node_inputs[size_t(1 - k)];
    if (src < 0 || skip < 0 || src == skip || L.output != src) continue;
    if (c.readers[n.inputs[size_t(k)]] != 1 || c.graph_outputs.count(n.inputs[size_t(k)])) continue;
    if (tensors_[size_t(src)].dims != spec.output || tensors_[size_t(skip)].dims != spec.output) continue;
    if (gate_state_.params.count(L.nodes[0]) || gate_state_.consumers.count(L.nodes[0])) continue;
    EpilogueSteps* target = bundle_target(last, "Add");
    if (!target) return false;
    target->add_residual();
    L.ops.push_back(n.op_type);
    L.nodes.push_back(n.name);
    L.node_inputs.push_back(skip);
    L.constant_dims.push_back(Dims{});
    if (std::find(L.inputs.begin(), L.inputs.end(), skip) == L.inputs.end()) L.inputs.push_back(skip);
    tensors_[size_t(src)].name = n.outputs[0];  // the layer now writes the sum
    c.act[n.outputs[0]] = src;
    return true;
  }
  return false;
}

// Bundles node n into its producer's layer when it runs in place right after it
// (a BatchNormalization or activation joining the epilogue, or a passthrough).
bool LayerGraph::try_bundle(const Node& n, const KernelSpec& spec, const std::vector<int>& node_inputs,
                            CompileState& c) {
  if (try_bundle_swish(n, node_inputs, c)) return true;
  if (try_bundle_residual(n, spec, node_inputs, c)) return true;
  const int src = node_inputs.empty() ? -1 : node_inputs[0];
  const int producer = src >= 0 ? tensors_[size_t(src)].producer : -1;
  if (producer < 0 || layers_[size_t(producer)].output != src) return false;
  if (c.readers[n.inputs[0]] != 1 || c.graph_outputs.count(n.inputs[0])) return false;  // not the sole reader
  const bool passthrough = is_passthrough(*spec.op);
  EpilogueSteps* target = nullptr;
  if (!passthrough && joins_epilogue(*spec.op) && takes_epilogue(*layer_ops_[size_t(producer)]))
    target = bundle_target(producer, n.op_type);
  if (!passthrough && !target) return false;
  EpilogueSteps scratch;  // passthrough ops add nothing; the call checks them
  append_to_epilogue(spec, passthrough ? scratch : *target);
  Layer& L = layers_[size_t(producer)];
  L.ops.push_back(n.op_type);
  L.nodes.push_back(n.name);
  tensors_[size_t(src)].name = n.outputs[0];  // the layer now writes this node's output
  c.act[n.outputs[0]] = src;
  return true;
}

void LayerGraph::add_layer(const Node& n, const KernelSpec& spec, const std::vector<int>& node_inputs,
                           NodeShapes& shapes, CompileState& c) {
  const int l = int(layers_.size());
  Layer L;
  L.name = n.name;
  L.ops = {n.op_type};
  L.nodes = {n.name};
  L.node_inputs = node_inputs;
  std::vector<ValueShape> head_inputs;
  std::vector<Dims> in0;  // per node input at the declared batch
  for (size_t i = 0; i < node_inputs.size(); ++i) {
    const InputInfo& in = spec.inputs[i];
    L.constant_dims.push_back(node_inputs[i] < 0 ? in.dims : Dims{});
    if (node_inputs[i] >= 0 && std::find(L.inputs.begin(), L.inputs.end(), node_inputs[i]) == L.inputs.end())
      L.inputs.push_back(node_inputs[i]);
    ValueShape v = in.constant ? constant_shape(*in.value) : ValueShape{};
    v.name = in.name;
    v.present = in.present;
    v.dims = in.dims;
    v.dtype = in.dtype;
    head_inputs.push_back(std::move(v));
    in0.push_back(in.dims);
  }
  add_kernel(spec);  // the kernel is layer l's from here on
  ActivationTensor out;
  out.name = n.outputs[0];
  out.dims = spec.output;
  out.dtype = spec.output_dtype;
  out.producer = l;
  note_batching(n, shapes, l, out, in0);
  L.output = int(tensors_.size());
  c.act[out.name] = L.output;
  tensors_.push_back(out);
  c.dims1.push_back(shapes.probe_ok ? shapes.out1[0].dims : Dims{});
  c.probe_ok.push_back(shapes.probe_ok);
  layers_.push_back(std::move(L));
  layer_ops_.push_back(std::move(shapes.op));
  layer_inputs_.push_back(std::move(head_inputs));
}

// A batched model keeps the batch on axis 0 of every activation and mixes no samples.
void LayerGraph::note_batching(const Node& n, const NodeShapes& shapes, int layer,
                               const ActivationTensor& out, const std::vector<Dims>& in0) {
  if (!batched_) return;
  const int64_t n1 = declared_batch_ + 1;
  const Dims& d1 = shapes.probe_ok ? shapes.out1[0].dims : Dims{};
  std::string why;
  if (!shapes.probe_ok)
    why = "its shapes do not follow a change of batch size";
  else if (out.dims.empty() || d1.empty() || out.dims[0] != declared_batch_ || d1[0] != n1 ||
           !std::equal(out.dims.begin() + 1, out.dims.end(), d1.begin() + 1, d1.end()))
    why = "its output " + dims_string(out.dims) + " does not keep the batch on axis 0";
  else if (mixes_samples(layer, in0))
    why = "it combines values of different samples";
  if (!why.empty()) {
    batched_ = false;
    not_batched_reason_ = node_label(n) + ": " + why;
  }
}

// Outputs: computed by some layer, listed once, as declared.
void LayerGraph::add_outputs(const Graph& g, CompileState& c) {
  for (const std::string& name : g.outputs) {
    auto it = c.act.find(name);
    if (it == c.act.end())
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
}

// Unique layer names, consumers, sample sizes, MACs.
void LayerGraph::finish() {
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
  for (size_t l = 0; l < layers_.size(); ++l)
    layers_[l].macs_per_sample = layer_macs(int(l)) + layers_[l].gate_macs_per_sample;
}

// The head op's MACs for one sample (the whole request when not batched).
int64_t LayerGraph::layer_macs(int l) const {
  const Op& op = *layer_ops_[size_t(l)];
  if (!op.counts_macs()) return 0;
  std::vector<ValueShape> in = layer_inputs_[size_t(l)];
  const std::vector<Dims> d = call_dims(l, 1);
  for (size_t i = 0; i < in.size(); ++i)
    if (in[i].present) in[i].dims = d[i];
  return op.macs(in, op.shape(in));
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
