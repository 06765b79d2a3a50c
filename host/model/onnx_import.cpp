#include "frugal/model/onnx_import.h"

#include <onnx/onnx_pb.h>  // defines ONNX_API, then includes onnx-ml.pb.h

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include "frugal/error.h"
#include "frugal/model/tensor_pb.h"
#include "model/protobuf_io.h"

namespace frugal {

namespace {

using HostCopied = std::function<void(uint64_t address)>;

[[noreturn]] void fail(const std::string& origin, const std::string& msg) {
  throw Error(origin + ": " + msg);
}

std::string node_label(const onnx::NodeProto& n, int index) {
  std::string s = n.op_type() + " node ";
  s += n.name().empty() ? "#" + std::to_string(index) : "'" + n.name() + "'";
  return s;
}

// Value info (type + shape) of a graph input, output or intermediate value.
void read_value_info(const onnx::ValueInfoProto& v, TensorDesc& d, const std::string& origin) {
  d.name = v.name();
  d.doc = v.doc_string();
  d.dtype = DType::Undefined;
  d.has_shape = false;
  if (!v.has_type()) return;
  const onnx::TypeProto& type = v.type();
  if (type.value_case() != onnx::TypeProto::kTensorType)
    fail(origin, "value '" + v.name() +
                     "' is not a tensor (sequence, map, optional or sparse types are not supported)");
  const onnx::TypeProto::Tensor& tt = type.tensor_type();
  const int32_t et = tt.elem_type();
  if (et < 0 || et > 13 || et == onnx::TensorProto::STRING)
    fail(origin,
         "value '" + v.name() + "' has unsupported dtype " +
             (et == onnx::TensorProto::STRING ? std::string("string") : "data type " + std::to_string(et)));
  d.dtype = static_cast<DType>(et);
  if (!tt.has_shape()) return;
  d.has_shape = true;
  for (const auto& dim : tt.shape().dim()) {
    Dim x;
    if (dim.has_dim_value()) {
      if (dim.dim_value() < 0)
        fail(origin, "value '" + v.name() + "' has negative dimension " + std::to_string(dim.dim_value()));
      x.value = dim.dim_value();
    } else if (dim.has_dim_param()) {
      x.symbol = dim.dim_param();
    }
    d.shape.push_back(x);
  }
}

Attribute read_attribute(const onnx::AttributeProto& a, const std::string& where, const std::string& origin) {
  Attribute r;
  r.name = a.name();
  auto type = a.type();
  if (type == onnx::AttributeProto::UNDEFINED) {  // very old files: the set field tells the kind
    if (a.has_f())
      type = onnx::AttributeProto::FLOAT;
    else if (a.has_i())
      type = onnx::AttributeProto::INT;
    else if (a.has_s())
      type = onnx::AttributeProto::STRING;
    else if (a.has_t())
      type = onnx::AttributeProto::TENSOR;
    else if (a.floats_size())
      type = onnx::AttributeProto::FLOATS;
    else if (a.ints_size())
      type = onnx::AttributeProto::INTS;
    else if (a.strings_size())
      type = onnx::AttributeProto::STRINGS;
    else
      fail(origin, where + ": attribute '" + a.name() + "' has no type and no value");
  }
  switch (type) {
    case onnx::AttributeProto::FLOAT:
      r.kind = Attribute::Kind::Float;
      r.f = a.f();
      break;
    case onnx::AttributeProto::INT:
      r.kind = Attribute::Kind::Int;
      r.i = a.i();
      break;
    case onnx::AttributeProto::STRING:
      r.kind = Attribute::Kind::String;
      r.s = a.s();
      break;
    case onnx::AttributeProto::TENSOR:
      r.kind = Attribute::Kind::Tensor;
      r.t = tensor_from_proto(a.t(), origin + ": " + where + ", attribute '" + a.name() + "'");
      break;
    case onnx::AttributeProto::FLOATS:
      r.kind = Attribute::Kind::Floats;
      r.floats.assign(a.floats().begin(), a.floats().end());
      break;
    case onnx::AttributeProto::INTS:
      r.kind = Attribute::Kind::Ints;
      r.ints.assign(a.ints().begin(), a.ints().end());
      break;
    case onnx::AttributeProto::STRINGS:
      r.kind = Attribute::Kind::Strings;
      r.strings.assign(a.strings().begin(), a.strings().end());
      break;
    default:
      fail(origin, where + ": attribute '" + a.name() + "' is of kind " +
                       onnx::AttributeProto::AttributeType_Name(type) +
                       " (subgraphs, tensor lists, sparse tensors and types are not supported)");
  }
  return r;
}

// The model's and the graph's own fields (opsets, producer, docs, metadata).
void read_model_fields(const onnx::ModelProto& m, Graph& g) {
  g.ir_version = m.ir_version();
  g.opsets.clear();
  for (const auto& op : m.opset_import()) g.opsets.push_back(OpsetImport{op.domain(), op.version()});
  g.producer_name = m.producer_name();
  g.producer_version = m.producer_version();
  g.model_doc = m.doc_string();
  g.model_domain = m.domain();
  g.model_version = m.model_version();
  for (const auto& kv : m.metadata_props()) g.metadata_props.emplace_back(kv.key(), kv.value());
  g.name = m.graph().name();
  g.graph_doc = m.graph().doc_string();
}

// Initializers first: a graph input of the same name is then not a real input
// (IR < 4 lists initializers as inputs). Returns the names the inputs list.
// Each initializer's bytes in the message are freed as soon as the graph holds
// them, so that the weights are not held twice while a model loads.
// A host-memory reference is reported to `copied` once the graph holds its copy.
std::set<std::string> read_initializers_and_inputs(onnx::GraphProto& gp, Graph& g, const std::string& origin,
                                                   bool host_memory, const HostCopied& copied) {
  for (onnx::TensorProto& t : *gp.mutable_initializer()) {
    if (t.name().empty()) fail(origin, "an initializer has no name");
    if (g.tensors.count(t.name())) fail(origin, "initializer '" + t.name() + "' is defined twice");
    TensorDesc d = tensor_from_proto(t, origin, host_memory);
    std::string().swap(*t.mutable_raw_data());
    if (copied && host_memory)
      if (const uint64_t address = host_memory_address(t)) copied(address);
    d.is_initializer = true;
    g.initializer_order.push_back(d.name);
    g.tensors.emplace(d.name, std::move(d));
  }
  std::set<std::string> input_names;
  for (const onnx::ValueInfoProto& v : gp.input()) {
    if (v.name().empty()) fail(origin, "a graph input has no name");
    if (!input_names.insert(v.name()).second) fail(origin, "graph input '" + v.name() + "' is listed twice");
    if (g.tensors.count(v.name())) continue;
    TensorDesc d;
    read_value_info(v, d, origin);
    g.inputs.push_back(d.name);
    g.tensors.emplace(d.name, std::move(d));
  }
  return input_names;
}

// One node; an unnamed node gets "<op>_<index>" (made unique), since messages
// and plans need a name for every node.
Node read_node(const onnx::NodeProto& np, int i, std::set<std::string>& node_names,
               const std::string& origin) {
  const std::string where = node_label(np, i);
  if (np.op_type().empty()) fail(origin, "node #" + std::to_string(i) + " has no op_type");
  Node n;
  n.name = np.name();
  if (n.name.empty()) {
    std::string base = np.op_type() + "_" + std::to_string(i);
    n.name = base;
    for (int k = 1; node_names.count(n.name); ++k) n.name = base + "_" + std::to_string(k);
    node_names.insert(n.name);
  }
  n.op_type = np.op_type();
  n.domain = np.domain();
  n.doc = np.doc_string();
  n.inputs.assign(np.input().begin(), np.input().end());
  n.outputs.assign(np.output().begin(), np.output().end());
  for (const auto& a : np.attribute()) {
    if (n.has_attr(a.name())) fail(origin, where + ": attribute '" + a.name() + "' is given twice");
    n.attributes.push_back(read_attribute(a, where, origin));
  }
  return n;
}

// The nodes, and a tensor (of unknown type) for each value they produce; every
// non-empty output must be produced exactly once.
void read_nodes(const onnx::GraphProto& gp, Graph& g, const std::string& origin) {
  std::set<std::string> node_names;
  for (const auto& n : gp.node())
    if (!n.name().empty()) node_names.insert(n.name());
  std::map<std::string, std::string> produced_by;
  g.nodes.reserve(static_cast<size_t>(gp.node_size()));
  for (int i = 0; i < gp.node_size(); ++i) {
    Node n = read_node(gp.node(i), i, node_names, origin);
    for (const std::string& o : n.outputs) {
      if (o.empty()) continue;
      auto it = produced_by.find(o);
      if (it != produced_by.end())
        fail(origin, "value '" + o + "' is produced twice: by node '" + it->second + "' and by node '" +
                         n.name + "'");
      if (g.tensors.count(o))
        fail(origin,
             "node '" + n.name + "' writes '" + o + "', which is already a graph input or initializer");
      produced_by[o] = n.name;
    }
    g.nodes.push_back(std::move(n));
  }
  for (const Node& n : g.nodes)
    for (const std::string& o : n.outputs)
      if (!o.empty()) {
        TensorDesc d;
        d.name = o;
        d.dtype = DType::Undefined;
        g.tensors.emplace(o, std::move(d));
      }
}

// Outputs and intermediate value infos refine what the nodes declared.
void read_outputs_and_value_infos(const onnx::GraphProto& gp, const std::set<std::string>& input_names,
                                  Graph& g, const std::string& origin) {
  std::set<std::string> output_names;
  for (const onnx::ValueInfoProto& v : gp.output()) {
    if (!g.tensors.count(v.name()))
      fail(origin, "graph output '" + v.name() + "' is not produced by any node, input or initializer");
    if (!output_names.insert(v.name()).second)
      fail(origin, "graph output '" + v.name() + "' is listed twice");
    g.outputs.push_back(v.name());
    TensorDesc& d = g.tensors[v.name()];
    if (d.is_initializer || std::find(g.inputs.begin(), g.inputs.end(), v.name()) != g.inputs.end()) continue;
    read_value_info(v, d, origin);
  }
  for (const onnx::ValueInfoProto& v : gp.value_info()) {
    if (v.name().empty()) fail(origin, "a value_info entry has no name");
    auto it = g.tensors.find(v.name());
    if (it != g.tensors.end() &&
        (it->second.is_initializer || input_names.count(v.name()) || output_names.count(v.name())))
      continue;  // inputs, outputs and initializers already say it
    if (it == g.tensors.end() && !v.has_type() && v.doc_string().empty()) continue;  // says nothing
    TensorDesc d;
    read_value_info(v, d, origin);
    g.tensors[v.name()] = std::move(d);
  }
}

Graph convert(onnx::ModelProto& m, const std::string& origin, bool host_memory, const HostCopied& copied) {
  if (!m.has_graph()) fail(origin, "model has no graph");
  if (m.functions_size() > 0) fail(origin, "model-local functions are not supported");
  onnx::GraphProto& gp = *m.mutable_graph();
  if (gp.node_size() == 0) fail(origin, "graph has no nodes");
  if (gp.output_size() == 0) fail(origin, "graph has no outputs");
  if (gp.sparse_initializer_size() > 0) fail(origin, "sparse initializers are not supported");
  Graph g;
  read_model_fields(m, g);
  const std::set<std::string> input_names = read_initializers_and_inputs(gp, g, origin, host_memory, copied);
  read_nodes(gp, g, origin);
  read_outputs_and_value_infos(gp, input_names, g, origin);
  try {
    g.topological_sort();
  } catch (const std::runtime_error& e) {  // the graph's own message, named by file here
    fail(origin, e.what());
  }
  return g;
}

}  // namespace

Graph load_onnx_bytes(const void* data, size_t size, const std::string& origin, bool host_memory,
                      const HostCopied& copied) {
  onnx::ModelProto m;
  parse_protobuf(m, data, size, origin, "an ONNX model");
  return convert(m, origin, host_memory, copied);
}

// Parsed from the file itself: its bytes are never held beside the message.
Graph load_onnx_file(const std::string& path) {
  onnx::ModelProto m;
  parse_protobuf_file(m, path, "ONNX model", "an ONNX model");
  return convert(m, path, false, {});
}

}  // namespace frugal
