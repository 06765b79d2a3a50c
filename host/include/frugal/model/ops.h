// The op registry: every op the host and the plugins know, each defined once
// (frugal/model/op.h, frugal/model/ops/*.h) and listed once
// (host/model/op_registry.cpp). Shape inference, MAC counts, the folder and
// both executors read their ops from here.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "frugal/model/graph.h"
#include "frugal/model/op.h"

namespace frugal {

struct OpInfo {
  const char* op_type;  // the ONNX name, also the class name in frugal::ops
  FoldClass fold;       // how it treats a per-channel affine map (the folder's class)
  const char* fold_rule;
  bool activation;  // an ops::Activation: executors run it alone or fused into an epilogue
  // The op for node `n`: attributes read and checked (Error without the node's name).
  std::unique_ptr<Op> (*make)(const Node& n, int64_t opset);
};

// Every op, sorted by name.
const std::vector<OpInfo>& all_ops();
// The entry for `op_type` (ONNX default domain), or nullptr.
const OpInfo* op_info(const std::string& op_type);
// The entry for node `n` (checks the domain too), or nullptr.
const OpInfo* find_op(const Node& n);

// True for ops in the registry (ONNX default domain).
bool op_is_known(const std::string& op_type);
// Names of all ops in the registry, sorted.
std::vector<std::string> known_ops();
// Every node whose op is not known (or whose domain is not the ONNX default),
// as "OpType (node 'name')" strings, all of them, in graph order.
std::vector<std::string> unknown_op_nodes(const Graph& g);

// The op of node `n`; Error "<Op> node '<name>': ..." for an unknown op or a bad attribute.
std::unique_ptr<Op> make_op(const Node& n, int64_t opset);
// The model's default-domain (ai.onnx) opset; 13 when it declares none.
int64_t default_opset(const Graph& g);

}  // namespace frugal
