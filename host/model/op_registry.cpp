// The one list of ops. Adding an op: define class ops::<Type> in a header of
// frugal/model/ops/ (attributes, shape, MACs, kFold and kFoldRule), then add
// its line below; executors register their kernels for it in their own files.
#include <algorithm>
#include <type_traits>

#include "frugal/error.h"
#include "frugal/model/ops.h"
#include "frugal/model/ops/activation.h"
#include "frugal/model/ops/conv.h"
#include "frugal/model/ops/elementwise.h"
#include "frugal/model/ops/matmul.h"
#include "frugal/model/ops/normalization.h"
#include "frugal/model/ops/pool.h"
#include "frugal/model/ops/resize.h"
#include "frugal/model/ops/shape_ops.h"

namespace frugal {

namespace {

template <class T>
std::unique_ptr<Op> make(const Node& n, int64_t opset) {
  return std::make_unique<T>(n, opset);
}

#define FRUGAL_OP(T)                                                                                    \
  OpInfo {                                                                                              \
#T, ops::T::kFold, ops::T::kFoldRule, std::is_base_of_v < ops::Activation, ops::T>, &make < ops::T> \
  }

const std::vector<OpInfo> kOps = {
    FRUGAL_OP(Add),           FRUGAL_OP(AveragePool), FRUGAL_OP(BatchNormalization),
    FRUGAL_OP(Cast),          FRUGAL_OP(Clip),        FRUGAL_OP(Concat),
    FRUGAL_OP(Constant),      FRUGAL_OP(Conv),        FRUGAL_OP(Div),
    FRUGAL_OP(Dropout),       FRUGAL_OP(Elu),         FRUGAL_OP(Flatten),
    FRUGAL_OP(Gather),        FRUGAL_OP(Gemm),        FRUGAL_OP(GlobalAveragePool),
    FRUGAL_OP(GlobalMaxPool), FRUGAL_OP(Greater),     FRUGAL_OP(GreaterOrEqual),
    FRUGAL_OP(HardSigmoid),   FRUGAL_OP(HardSwish),   FRUGAL_OP(Identity),
    FRUGAL_OP(LeakyRelu),     FRUGAL_OP(LogSoftmax),  FRUGAL_OP(LRN),
    FRUGAL_OP(MatMul),        FRUGAL_OP(MaxPool),     FRUGAL_OP(Mul),
    FRUGAL_OP(Pad),           FRUGAL_OP(PRelu),       FRUGAL_OP(Relu),
    FRUGAL_OP(Reshape),       FRUGAL_OP(Resize),      FRUGAL_OP(Selu),
    FRUGAL_OP(Shape),         FRUGAL_OP(Sigmoid),     FRUGAL_OP(Softmax),
    FRUGAL_OP(Squeeze),       FRUGAL_OP(Sub),         FRUGAL_OP(Tanh),
    FRUGAL_OP(Transpose),     FRUGAL_OP(Unsqueeze),   FRUGAL_OP(Upsample),
    FRUGAL_OP(Where),
};

#undef FRUGAL_OP

bool default_domain(const std::string& domain) { return domain.empty() || domain == "ai.onnx"; }

}  // namespace

const std::vector<OpInfo>& all_ops() {
  static const std::vector<OpInfo> sorted = [] {
    std::vector<OpInfo> v = kOps;
    std::sort(v.begin(), v.end(),
              [](const OpInfo& a, const OpInfo& b) { return std::string(a.op_type) < b.op_type; });
    return v;
  }();
  return sorted;
}

const OpInfo* op_info(const std::string& op_type) {
  for (const OpInfo& d : all_ops())
    if (op_type == d.op_type) return &d;
  return nullptr;
}

const OpInfo* find_op(const Node& n) { return default_domain(n.domain) ? op_info(n.op_type) : nullptr; }

bool op_is_known(const std::string& op_type) { return op_info(op_type) != nullptr; }

std::vector<std::string> known_ops() {
  std::vector<std::string> out;
  for (const OpInfo& d : all_ops()) out.push_back(d.op_type);
  return out;
}

std::vector<std::string> unknown_op_nodes(const Graph& g) {
  std::vector<std::string> out;
  for (const Node& n : g.nodes)
    if (!find_op(n))
      out.push_back((default_domain(n.domain) ? "" : n.domain + ".") + n.op_type + " (node '" + n.name +
                    "')");
  return out;
}

std::unique_ptr<Op> make_op(const Node& n, int64_t opset) {
  const OpInfo* info = find_op(n);
  if (!info) throw Error(n.op_type + " node '" + n.name + "': op is not known");
  try {
    return info->make(n, opset);
  } catch (const std::exception& e) {
    throw Error(n.op_type + " node '" + n.name + "': " + e.what());
  }
}

int64_t default_opset(const Graph& g) {
  for (const OpsetImport& o : g.opsets)
    if (default_domain(o.domain)) return o.version;
  return 13;
}

}  // namespace frugal
