// The op table of the CPU executor: the common op list (plugins/common/op_table.h)
// with this executor's factory for each kernel family.
#include "common/op_table.h"
#include "kernels/kernel_util.h"

namespace frugal::cpu {

namespace {

const exec::OpTable<Kernel>& table() {
  static const exec::OpTable<Kernel> t = [] {
    exec::KernelFamilies<Kernel> f;
    f.conv = &make_conv;
    f.pool = &make_pool;
    f.binary = &make_binary;
    f.pointwise = &make_pointwise;
    f.passthrough = &make_pointwise;
    f.lrn = &make_lrn;
    f.gemm = &make_gemm;
    f.matmul = &make_matmul;
    f.reshape = &make_shape_op;
    f.concat = &make_shape_op;
    f.softmax = &make_softmax;
    return exec::OpTable<Kernel>(f);
  }();
  return t;
}

}  // namespace

bool op_is_supported(const std::string& op_type) { return table().supports(op_type); }
std::vector<std::string> supported_ops() { return table().ops(); }
std::unique_ptr<Kernel> make_kernel(const KernelSpec& s) { return table().make(s); }

}  // namespace frugal::cpu
