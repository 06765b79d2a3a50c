// Builds small Graphs directly through the IR, for shape and MAC tests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "frugal/model/graph.h"

namespace frugal::test {

struct GraphFixture {
  Graph g;

  // A float32 graph input with fixed dims (-1: symbolic "N").
  GraphFixture& input(const std::string& name, const std::vector<int64_t>& dims, DType t = DType::Float32) {
    TensorDesc d;
    d.name = name;
    d.dtype = t;
    d.has_shape = true;
    for (int64_t v : dims) d.shape.push_back(v < 0 ? Dim{-1, "N"} : Dim{v, ""});
    g.tensors[name] = d;
    g.inputs.push_back(name);
    return *this;
  }
  // A zero-filled float32 initializer.
  GraphFixture& weight(const std::string& name, const std::vector<int64_t>& dims) {
    g.add_initializer(name, DType::Float32, dims, nullptr);
    return *this;
  }
  GraphFixture& ints(const std::string& name, const std::vector<int64_t>& values) {
    g.add_initializer(name, DType::Int64, {static_cast<int64_t>(values.size())}, values.data());
    return *this;
  }
  GraphFixture& scalar_int(const std::string& name, int64_t value) {
    g.add_initializer(name, DType::Int64, {}, &value);
    return *this;
  }
  // Appends a node; its outputs get (shapeless) tensors.
  Node& node(const std::string& op, const std::string& name, std::vector<std::string> in,
             std::vector<std::string> out) {
    Node n;
    n.op_type = op;
    n.name = name;
    n.inputs = std::move(in);
    n.outputs = std::move(out);
    for (const std::string& o : n.outputs) {
      if (o.empty()) continue;
      TensorDesc d;
      d.name = o;
      d.dtype = DType::Undefined;
      g.tensors[o] = d;
    }
    g.nodes.push_back(std::move(n));
    return g.nodes.back();
  }
  std::vector<int64_t> dims(const std::string& name) const { return known_dims(g.tensor(name).shape); }
};

}  // namespace frugal::test
