#include "graphs_equal.h"

#include <cstring>
#include <sstream>

namespace frugal::test {

namespace {

bool floats_bitwise_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0);
}

bool tensors_equal(const TensorDesc& a, const TensorDesc& b, std::string& why) {
  const std::string where = "tensor '" + a.name + "': ";
  if (a.name != b.name) return why = "tensor names '" + a.name + "' vs '" + b.name + "'", false;
  if (a.dtype != b.dtype)
    return why = where + "dtype " + dtype_name(a.dtype) + " vs " + dtype_name(b.dtype), false;
  if (a.has_shape != b.has_shape) return why = where + "has_shape differs", false;
  if (!(a.shape == b.shape))
    return why = where + "shape " + shape_to_string(a.shape) + " vs " + shape_to_string(b.shape), false;
  if (a.is_initializer != b.is_initializer) return why = where + "is_initializer differs", false;
  if (a.data != b.data) return why = where + "data bytes differ", false;
  if (a.doc != b.doc) return why = where + "doc differs", false;
  return true;
}

bool attributes_equal(const Attribute& a, const Attribute& b, std::string& why) {
  const std::string where = "attribute '" + a.name + "': ";
  if (a.name != b.name) return why = "attribute names '" + a.name + "' vs '" + b.name + "'", false;
  if (a.kind != b.kind) return why = where + "kind differs", false;
  switch (a.kind) {
    case Attribute::Kind::Float:
      if (std::memcmp(&a.f, &b.f, sizeof(float)) != 0) return why = where + "float differs", false;
      break;
    case Attribute::Kind::Int:
      if (a.i != b.i) return why = where + "int differs", false;
      break;
    case Attribute::Kind::String:
      if (a.s != b.s) return why = where + "string differs", false;
      break;
    case Attribute::Kind::Tensor:
      if (a.t.has_value() != b.t.has_value()) return why = where + "tensor presence differs", false;
      if (a.t && !tensors_equal(*a.t, *b.t, why)) return why = where + why, false;
      break;
    case Attribute::Kind::Floats:
      if (!floats_bitwise_equal(a.floats, b.floats)) return why = where + "floats differ", false;
      break;
    case Attribute::Kind::Ints:
      if (a.ints != b.ints) return why = where + "ints differ", false;
      break;
    case Attribute::Kind::Strings:
      if (a.strings != b.strings) return why = where + "strings differ", false;
      break;
  }
  return true;
}

bool nodes_equal(const Node& a, const Node& b, std::string& why) {
  const std::string where = "node '" + a.name + "': ";
  if (a.name != b.name) return why = "node names '" + a.name + "' vs '" + b.name + "'", false;
  if (a.op_type != b.op_type || a.domain != b.domain) return why = where + "op or domain differs", false;
  if (a.inputs != b.inputs) return why = where + "inputs differ", false;
  if (a.outputs != b.outputs) return why = where + "outputs differ", false;
  if (a.doc != b.doc) return why = where + "doc differs", false;
  if (a.attributes.size() != b.attributes.size()) return why = where + "attribute count differs", false;
  for (size_t i = 0; i < a.attributes.size(); ++i)
    if (!attributes_equal(a.attributes[i], b.attributes[i], why)) return why = where + why, false;
  return true;
}

}  // namespace

bool graphs_equal(const Graph& a, const Graph& b, std::string* why_out) {
  std::string why;
  auto fail = [&](const std::string& w) {
    if (why_out) *why_out = w;
    return false;
  };
  if (a.name != b.name) return fail("graph names differ");
  if (a.ir_version != b.ir_version) return fail("ir_version differs");
  if (a.opsets.size() != b.opsets.size()) return fail("opset count differs");
  for (size_t i = 0; i < a.opsets.size(); ++i)
    if (a.opsets[i].domain != b.opsets[i].domain || a.opsets[i].version != b.opsets[i].version)
      return fail("opset " + std::to_string(i) + " differs");
  if (a.producer_name != b.producer_name || a.producer_version != b.producer_version)
    return fail("producer differs");
  if (a.model_doc != b.model_doc || a.graph_doc != b.graph_doc) return fail("doc strings differ");
  if (a.model_domain != b.model_domain || a.model_version != b.model_version)
    return fail("model domain/version differ");
  if (a.metadata_props != b.metadata_props) return fail("metadata_props differ");
  if (a.inputs != b.inputs) return fail("inputs differ");
  if (a.outputs != b.outputs) return fail("outputs differ");
  if (a.initializer_order != b.initializer_order) return fail("initializer_order differs");
  if (a.nodes.size() != b.nodes.size()) return fail("node count differs");
  for (size_t i = 0; i < a.nodes.size(); ++i)
    if (!nodes_equal(a.nodes[i], b.nodes[i], why)) return fail(why);
  if (a.tensors.size() != b.tensors.size()) return fail("tensor count differs");
  for (auto ia = a.tensors.begin(), ib = b.tensors.begin(); ia != a.tensors.end(); ++ia, ++ib) {
    if (ia->first != ib->first)
      return fail("tensor sets differ at '" + ia->first + "' vs '" + ib->first + "'");
    if (!tensors_equal(ia->second, ib->second, why)) return fail(why);
  }
  return true;
}

}  // namespace frugal::test
