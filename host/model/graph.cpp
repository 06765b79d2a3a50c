#include "frugal/model/graph.h"

#include <algorithm>
#include <cstring>
#include <queue>
#include <set>
#include <sstream>
#include <stdexcept>

#include "frugal/error.h"

namespace frugal {

size_t dtype_size(DType t) {
  switch (t) {
    case DType::Float32:
    case DType::Int32:
    case DType::UInt32:
      return 4;
    case DType::UInt8:
    case DType::Int8:
    case DType::Bool:
      return 1;
    case DType::UInt16:
    case DType::Int16:
    case DType::Float16:
      return 2;
    case DType::Int64:
    case DType::Float64:
    case DType::UInt64:
      return 8;
    default:
      return 0;
  }
}

const char* dtype_name(DType t) {
  switch (t) {
    case DType::Float32:
      return "float32";
    case DType::UInt8:
      return "uint8";
    case DType::Int8:
      return "int8";
    case DType::UInt16:
      return "uint16";
    case DType::Int16:
      return "int16";
    case DType::Int32:
      return "int32";
    case DType::Int64:
      return "int64";
    case DType::String:
      return "string";
    case DType::Bool:
      return "bool";
    case DType::Float16:
      return "float16";
    case DType::Float64:
      return "float64";
    case DType::UInt32:
      return "uint32";
    case DType::UInt64:
      return "uint64";
    default:
      return "undefined";
  }
}

Shape make_shape(const std::vector<int64_t>& dims) {
  Shape s;
  s.reserve(dims.size());
  for (int64_t d : dims) s.push_back(Dim{d, ""});
  return s;
}

std::vector<int64_t> known_dims(const Shape& s) {
  std::vector<int64_t> out;
  out.reserve(s.size());
  for (const Dim& d : s) {
    if (!d.is_known()) throw Error("shape " + shape_to_string(s) + " has a symbolic dimension");
    out.push_back(d.value);
  }
  return out;
}

bool shape_is_known(const Shape& s) {
  return std::all_of(s.begin(), s.end(), [](const Dim& d) { return d.is_known(); });
}

int64_t element_count(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

std::string shape_to_string(const Shape& s) {
  std::ostringstream os;
  os << "[";
  for (size_t i = 0; i < s.size(); ++i) {
    if (i) os << ", ";
    if (s[i].is_known())
      os << s[i].value;
    else
      os << (s[i].symbol.empty() ? "?" : s[i].symbol);
  }
  os << "]";
  return os.str();
}

// ---- TensorDesc -------------------------------------------------------------

const float* TensorDesc::f32() const {
  if (dtype != DType::Float32) throw Error("tensor '" + name + "' is " + dtype_name(dtype) + ", not float32");
  return reinterpret_cast<const float*>(data.data());
}

float* TensorDesc::f32() {
  if (dtype != DType::Float32) throw Error("tensor '" + name + "' is " + dtype_name(dtype) + ", not float32");
  return reinterpret_cast<float*>(data.data());
}

std::vector<int64_t> TensorDesc::as_int64() const {
  std::vector<int64_t> out;
  if (dtype == DType::Int64) {
    out.resize(data.size() / 8);
    if (!out.empty()) std::memcpy(out.data(), data.data(), out.size() * 8);
  } else if (dtype == DType::Int32) {
    std::vector<int32_t> tmp(data.size() / 4);
    if (!tmp.empty()) std::memcpy(tmp.data(), data.data(), tmp.size() * 4);
    out.assign(tmp.begin(), tmp.end());
  } else {
    throw Error("tensor '" + name + "' is " + dtype_name(dtype) + ", not an integer tensor");
  }
  return out;
}

std::vector<float> TensorDesc::as_float() const {
  std::vector<float> out;
  if (dtype == DType::Float32) {
    out.resize(data.size() / 4);
    if (!out.empty()) std::memcpy(out.data(), data.data(), out.size() * 4);
  } else if (dtype == DType::Float64) {
    std::vector<double> tmp(data.size() / 8);
    if (!tmp.empty()) std::memcpy(tmp.data(), data.data(), tmp.size() * 8);
    out.assign(tmp.begin(), tmp.end());
  } else {
    throw Error("tensor '" + name + "' is " + dtype_name(dtype) + ", not a float tensor");
  }
  return out;
}

// ---- Node -------------------------------------------------------------------

const Attribute* Node::attr(const std::string& n) const {
  for (const Attribute& a : attributes)
    if (a.name == n) return &a;
  return nullptr;
}

int64_t Node::attr_int(const std::string& n, int64_t dflt) const {
  const Attribute* a = attr(n);
  return a ? a->i : dflt;
}

float Node::attr_float(const std::string& n, float dflt) const {
  const Attribute* a = attr(n);
  return a ? a->f : dflt;
}

std::string Node::attr_string(const std::string& n, const std::string& dflt) const {
  const Attribute* a = attr(n);
  return a ? a->s : dflt;
}

std::vector<int64_t> Node::attr_ints(const std::string& n, const std::vector<int64_t>& dflt) const {
  const Attribute* a = attr(n);
  return a ? a->ints : dflt;
}

namespace {
Attribute& upsert(std::vector<Attribute>& attrs, const std::string& n, Attribute::Kind k) {
  for (Attribute& a : attrs)
    if (a.name == n) {
      a.kind = k;
      return a;
    }
  attrs.push_back(Attribute{});
  attrs.back().name = n;
  attrs.back().kind = k;
  return attrs.back();
}
}  // namespace

void Node::set_attr_int(const std::string& n, int64_t v) {
  upsert(attributes, n, Attribute::Kind::Int).i = v;
}
void Node::set_attr_float(const std::string& n, float v) {
  upsert(attributes, n, Attribute::Kind::Float).f = v;
}
void Node::set_attr_ints(const std::string& n, const std::vector<int64_t>& v) {
  upsert(attributes, n, Attribute::Kind::Ints).ints = v;
}

// ---- Graph ------------------------------------------------------------------

const TensorDesc& Graph::tensor(const std::string& n) const {
  auto it = tensors.find(n);
  if (it == tensors.end()) throw Error("graph has no tensor named '" + n + "'");
  return it->second;
}

TensorDesc& Graph::tensor(const std::string& n) {
  auto it = tensors.find(n);
  if (it == tensors.end()) throw Error("graph has no tensor named '" + n + "'");
  return it->second;
}

bool Graph::is_initializer(const std::string& n) const {
  auto it = tensors.find(n);
  return it != tensors.end() && it->second.is_initializer;
}

int Graph::producer(const std::string& n) const {
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const std::string& o : nodes[i].outputs)
      if (o == n) return static_cast<int>(i);
  return -1;
}

std::vector<int> Graph::consumers(const std::string& n) const {
  std::vector<int> out;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const std::string& in : nodes[i].inputs)
      if (in == n) {
        out.push_back(static_cast<int>(i));
        break;
      }
  return out;
}

int Graph::node_index(const std::string& node_name) const {
  for (size_t i = 0; i < nodes.size(); ++i)
    if (nodes[i].name == node_name) return static_cast<int>(i);
  return -1;
}

void Graph::topological_sort() {
  // Kahn's algorithm; the ready queue is ordered by original index so that an
  // already sorted graph keeps its order.
  std::map<std::string, int> producer_of;
  for (size_t i = 0; i < nodes.size(); ++i)
    for (const std::string& o : nodes[i].outputs)
      if (!o.empty()) producer_of[o] = static_cast<int>(i);
  std::vector<int> pending(nodes.size(), 0);
  std::vector<std::vector<int>> dependants(nodes.size());
  std::vector<std::string> undefined;
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::set<int> deps;
    for (const std::string& in : nodes[i].inputs) {
      if (in.empty()) continue;
      auto it = producer_of.find(in);
      if (it != producer_of.end()) {
        deps.insert(it->second);
      } else if (!has_tensor(in) || (!tensor(in).is_initializer &&
                                     std::find(inputs.begin(), inputs.end(), in) == inputs.end())) {
        undefined.push_back("node '" + nodes[i].name + "' (" + nodes[i].op_type + ") reads '" + in +
                            "', which no node, input or initializer defines");
      }
    }
    for (int d : deps) dependants[d].push_back(static_cast<int>(i));
    pending[i] = static_cast<int>(deps.size());
  }
  if (!undefined.empty()) {
    std::string msg = "graph references undefined values:";
    for (const std::string& u : undefined) msg += "\n  " + u;
    throw Error(msg);
  }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (size_t i = 0; i < nodes.size(); ++i)
    if (pending[i] == 0) ready.push(static_cast<int>(i));
  std::vector<int> order;
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int d : dependants[i])
      if (--pending[d] == 0) ready.push(d);
  }
  if (order.size() != nodes.size()) {
    std::string msg = "graph has a cycle through nodes:";
    for (size_t i = 0; i < nodes.size(); ++i)
      if (pending[i] > 0) msg += " '" + nodes[i].name + "'";
    throw Error(msg);
  }
  std::vector<Node> sorted;
  sorted.reserve(nodes.size());
  for (int i : order) sorted.push_back(std::move(nodes[i]));
  nodes = std::move(sorted);
}

TensorDesc& Graph::add_initializer(const std::string& n, DType t, const std::vector<int64_t>& dims,
                                   const void* bytes) {
  TensorDesc d;
  d.name = n;
  d.dtype = t;
  d.shape = make_shape(dims);
  d.has_shape = true;
  d.is_initializer = true;
  size_t size = static_cast<size_t>(element_count(dims)) * dtype_size(t);
  d.data.resize(size);
  if (bytes && size) std::memcpy(d.data.data(), bytes, size);
  if (std::find(initializer_order.begin(), initializer_order.end(), n) == initializer_order.end())
    initializer_order.push_back(n);
  tensors[n] = std::move(d);
  return tensors[n];
}

std::string Graph::unique_name(const std::string& base) const {
  std::set<std::string> used;
  for (const auto& kv : tensors) used.insert(kv.first);
  for (const Node& n : nodes) {
    used.insert(n.name);
    for (const std::string& o : n.outputs) used.insert(o);
  }
  if (!used.count(base)) return base;
  for (int k = 1;; ++k) {
    std::string c = base + "_" + std::to_string(k);
    if (!used.count(c)) return c;
  }
}

void Graph::remove_unused_tensors() {
  std::set<std::string> used(inputs.begin(), inputs.end());
  used.insert(outputs.begin(), outputs.end());
  for (const Node& n : nodes) {
    used.insert(n.inputs.begin(), n.inputs.end());
    used.insert(n.outputs.begin(), n.outputs.end());
  }
  for (auto it = tensors.begin(); it != tensors.end();) {
    if (!used.count(it->first))
      it = tensors.erase(it);
    else
      ++it;
  }
  initializer_order.erase(std::remove_if(initializer_order.begin(), initializer_order.end(),
                                         [&](const std::string& n) { return !tensors.count(n); }),
                          initializer_order.end());
}

int64_t Graph::parameter_count() const {
  int64_t n = 0;
  for (const auto& kv : tensors) {
    const TensorDesc& t = kv.second;
    if (t.is_initializer &&
        (t.dtype == DType::Float32 || t.dtype == DType::Float64 || t.dtype == DType::Float16))
      n += static_cast<int64_t>(t.data.size() / dtype_size(t.dtype));
  }
  return n;
}

}  // namespace frugal
