// The ops both executors run, and which kernel family each belongs to: one op
// list for both. An executor fills a KernelFamilies with its factories (one per
// family) and gets its op table.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "common/kernel_spec.h"

namespace frugal::exec {

template <class KernelT>
struct KernelFamilies {
  using Factory = std::unique_ptr<KernelT> (*)(const KernelSpec&);
  Factory conv = nullptr;
  Factory pool = nullptr;         // MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool
  Factory binary = nullptr;       // Add, Sub, Mul, Div
  Factory pointwise = nullptr;    // BatchNormalization, Relu, Clip, Sigmoid
  Factory passthrough = nullptr;  // Identity, Dropout (inference)
  Factory lrn = nullptr;
  Factory gemm = nullptr;
  Factory matmul = nullptr;
  Factory reshape = nullptr;  // Flatten, Reshape
  Factory concat = nullptr;
  Factory softmax = nullptr;
};

template <class KernelT>
class OpTable {
 public:
  using Factory = typename KernelFamilies<KernelT>::Factory;
  explicit OpTable(const KernelFamilies<KernelT>& f)
      : table_{{"Conv", f.conv},           {"MaxPool", f.pool},
               {"AveragePool", f.pool},    {"GlobalAveragePool", f.pool},
               {"GlobalMaxPool", f.pool},  {"Add", f.binary},
               {"Sub", f.binary},          {"Mul", f.binary},
               {"Div", f.binary},          {"BatchNormalization", f.pointwise},
               {"Relu", f.pointwise},      {"Clip", f.pointwise},
               {"Sigmoid", f.pointwise},   {"Identity", f.passthrough},
               {"Dropout", f.passthrough}, {"LRN", f.lrn},
               {"Gemm", f.gemm},           {"MatMul", f.matmul},
               {"Flatten", f.reshape},     {"Reshape", f.reshape},
               {"Concat", f.concat},       {"Softmax", f.softmax}} {}

  bool supports(const std::string& op_type) const { return table_.count(op_type) != 0; }
  std::vector<std::string> ops() const {
    std::vector<std::string> v;
    for (const auto& kv : table_) v.push_back(kv.first);
    return v;
  }
  // unsupported() naming the node for an op outside the table.
  std::unique_ptr<KernelT> make(const KernelSpec& s) const {
    auto it = table_.find(s.node->op_type);
    if (it == table_.end()) unsupported(s, "op " + s.node->op_type + " is not supported");
    return it->second(s);
  }

 private:
  std::map<std::string, Factory> table_;
};

}  // namespace frugal::exec
