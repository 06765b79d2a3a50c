// The op table of the CPU executor: which ops it runs and which factory builds each.
#include <map>

#include "kernels/kernel_util.h"

namespace frugal::cpu {

namespace {

using Factory = std::unique_ptr<Kernel> (*)(const KernelSpec&);

const std::map<std::string, Factory>& table() {
  static const std::map<std::string, Factory> t = {
      {"Conv", &make_conv},
      {"MaxPool", &make_pool},
      {"AveragePool", &make_pool},
      {"GlobalAveragePool", &make_pool},
      {"GlobalMaxPool", &make_pool},
      {"Add", &make_binary},
      {"Sub", &make_binary},
      {"Mul", &make_binary},
      {"Div", &make_binary},
      {"BatchNormalization", &make_pointwise},
      {"Relu", &make_pointwise},
      {"Clip", &make_pointwise},
      {"Sigmoid", &make_pointwise},
      {"Identity", &make_pointwise},
      {"Dropout", &make_pointwise},
      {"LRN", &make_lrn},
      {"Gemm", &make_gemm},
      {"MatMul", &make_matmul},
      {"Flatten", &make_shape_op},
      {"Reshape", &make_shape_op},
      {"Concat", &make_shape_op},
      {"Softmax", &make_softmax},
  };
  return t;
}

}  // namespace

bool op_is_supported(const std::string& op_type) { return table().count(op_type) != 0; }

std::vector<std::string> supported_ops() {
  std::vector<std::string> v;
  for (const auto& kv : table()) v.push_back(kv.first);
  return v;
}

std::unique_ptr<Kernel> make_kernel(const KernelSpec& s) {
  auto it = table().find(s.node->op_type);
  if (it == table().end()) unsupported(s, "op " + s.node->op_type + " is not supported");
  return it->second(s);
}

}  // namespace frugal::cpu
