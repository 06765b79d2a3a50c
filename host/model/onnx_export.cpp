#include "frugal/model/onnx_export.h"

#include <onnx/onnx_pb.h>  // defines ONNX_API, then includes onnx-ml.pb.h

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>

#include "frugal/error.h"
#include "frugal/model/tensor_pb.h"

namespace frugal {

namespace {

// Smaller initializers stay inline: a reference would not save anything.
constexpr size_t kSmallestReference = 4096;

void write_value_info(const TensorDesc& d, onnx::ValueInfoProto& v) {
  v.set_name(d.name);
  if (!d.doc.empty()) v.set_doc_string(d.doc);
  if (d.dtype == DType::Undefined && !d.has_shape) return;
  onnx::TypeProto::Tensor* tt = v.mutable_type()->mutable_tensor_type();
  tt->set_elem_type(static_cast<int32_t>(d.dtype));
  if (!d.has_shape) return;
  onnx::TensorShapeProto* sp = tt->mutable_shape();
  for (const Dim& dim : d.shape) {
    auto* dp = sp->add_dim();
    if (dim.is_known())
      dp->set_dim_value(dim.value);
    else if (!dim.symbol.empty())
      dp->set_dim_param(dim.symbol);
  }
}

void write_attribute(const Attribute& a, onnx::AttributeProto& p) {
  p.set_name(a.name);
  switch (a.kind) {
    case Attribute::Kind::Float:
      p.set_type(onnx::AttributeProto::FLOAT);
      p.set_f(a.f);
      break;
    case Attribute::Kind::Int:
      p.set_type(onnx::AttributeProto::INT);
      p.set_i(a.i);
      break;
    case Attribute::Kind::String:
      p.set_type(onnx::AttributeProto::STRING);
      p.set_s(a.s);
      break;
    case Attribute::Kind::Tensor:
      p.set_type(onnx::AttributeProto::TENSOR);
      if (!a.t) throw Error("attribute '" + a.name + "' is a tensor attribute without a tensor");
      tensor_to_proto(*a.t, *p.mutable_t());
      break;
    case Attribute::Kind::Floats:
      p.set_type(onnx::AttributeProto::FLOATS);
      for (float f : a.floats) p.add_floats(f);
      break;
    case Attribute::Kind::Ints:
      p.set_type(onnx::AttributeProto::INTS);
      for (int64_t i : a.ints) p.add_ints(i);
      break;
    case Attribute::Kind::Strings:
      p.set_type(onnx::AttributeProto::STRINGS);
      for (const std::string& s : a.strings) p.add_strings(s);
      break;
  }
}

const TensorDesc& lookup(const Graph& g, const std::string& name, const char* role) {
  auto it = g.tensors.find(name);
  if (it == g.tensors.end())
    throw Error(std::string("cannot export: graph ") + role + " '" + name + "' has no tensor");
  return it->second;
}

}  // namespace

std::string save_onnx_bytes(const Graph& g, WeightsAs weights) {
  onnx::ModelProto m;
  m.set_ir_version(g.ir_version);
  for (const OpsetImport& op : g.opsets) {
    auto* p = m.add_opset_import();
    p->set_domain(op.domain);
    p->set_version(op.version);
  }
  if (!g.producer_name.empty()) m.set_producer_name(g.producer_name);
  if (!g.producer_version.empty()) m.set_producer_version(g.producer_version);
  if (!g.model_domain.empty()) m.set_domain(g.model_domain);
  if (g.model_version != 0) m.set_model_version(g.model_version);
  if (!g.model_doc.empty()) m.set_doc_string(g.model_doc);
  for (const auto& kv : g.metadata_props) {
    auto* p = m.add_metadata_props();
    p->set_key(kv.first);
    p->set_value(kv.second);
  }

  onnx::GraphProto* gp = m.mutable_graph();
  gp->set_name(g.name);
  if (!g.graph_doc.empty()) gp->set_doc_string(g.graph_doc);

  for (const Node& n : g.nodes) {
    onnx::NodeProto* np = gp->add_node();
    for (const std::string& i : n.inputs) np->add_input(i);
    for (const std::string& o : n.outputs) np->add_output(o);
    np->set_name(n.name);
    np->set_op_type(n.op_type);
    if (!n.domain.empty()) np->set_domain(n.domain);
    for (const Attribute& a : n.attributes) {
      try {
        write_attribute(a, *np->add_attribute());
      } catch (const Error& e) {
        throw Error("cannot export node '" + n.name + "': " + e.what());
      }
    }
    if (!n.doc.empty()) np->set_doc_string(n.doc);
  }

  // Initializers in file order, then any added without add_initializer.
  std::vector<std::string> inits;
  std::set<std::string> seen;
  for (const std::string& n : g.initializer_order)
    if (g.is_initializer(n) && seen.insert(n).second) inits.push_back(n);
  for (const auto& kv : g.tensors)
    if (kv.second.is_initializer && seen.insert(kv.first).second) inits.push_back(kv.first);
  for (const std::string& n : inits) {
    const TensorDesc& d = g.tensors.at(n);
    if (weights != WeightsAs::Bytes && d.data.size() >= kSmallestReference)
      tensor_to_proto_by_address(d, *gp->add_initializer(), weights == WeightsAs::HostAddresses);
    else
      tensor_to_proto(d, *gp->add_initializer());
  }

  for (const std::string& n : g.inputs) write_value_info(lookup(g, n, "input"), *gp->add_input());
  if (g.ir_version < 4)
    for (const std::string& n : inits) write_value_info(g.tensors.at(n), *gp->add_input());
  for (const std::string& n : g.outputs) write_value_info(lookup(g, n, "output"), *gp->add_output());

  std::set<std::string> io(g.inputs.begin(), g.inputs.end());
  io.insert(g.outputs.begin(), g.outputs.end());
  for (const auto& kv : g.tensors) {
    const TensorDesc& d = kv.second;
    if (d.is_initializer || io.count(kv.first)) continue;
    if (d.dtype == DType::Undefined && !d.has_shape && d.doc.empty()) continue;
    write_value_info(d, *gp->add_value_info());
  }

  std::string out;
  if (!m.SerializeToString(&out))
    throw Error("cannot serialize graph '" + g.name + "' to ONNX (larger than 2 GiB?)");
  return out;
}

void save_onnx_file(const Graph& g, const std::string& path) {
  const std::string bytes = save_onnx_bytes(g);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw Error("cannot write ONNX model '" + path + "': " + std::strerror(errno));
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) throw Error("cannot write ONNX model '" + path + "': " + std::strerror(errno));
}

}  // namespace frugal
