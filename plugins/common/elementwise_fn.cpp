#include "common/elementwise_fn.h"

#include "frugal/model/ops/elementwise.h"

namespace frugal::exec {

ElementwiseFn elementwise_fn(const KernelSpec& s) {
  if (const auto* a = dynamic_cast<const ops::Arithmetic*>(s.op)) return ElementwiseFn(int(a->fn));
  if (const auto* c = dynamic_cast<const ops::Comparison*>(s.op))
    return c->fn == ops::Comparison::Fn::Greater ? ElementwiseFn::Greater : ElementwiseFn::GreaterOrEqual;
  if (dynamic_cast<const ops::Where*>(s.op)) return ElementwiseFn::Where;
  fail(s, "not an elementwise op");
}

std::vector<float> constant_values(const KernelSpec& s, size_t i, const char* role) {
  const InputInfo& in = required_input(s, i, role);
  if (in.constant && in.value->dtype == DType::Bool) {
    std::vector<float> v;
    for (uint8_t b : in.value->data) v.push_back(b ? 1.0f : 0.0f);
    return v;
  }
  return constant_floats(s, i, role);
}

void require_operand(const KernelSpec& s, size_t i, const char* role, bool bool_ok) {
  const InputInfo& in = required_input(s, i, role);
  if (in.dtype == DType::Float32 || (bool_ok && in.dtype == DType::Bool)) return;
  unsupported(s, std::string(role) + " '" + in.name + "' has dtype " + dtype_name(in.dtype) + "; the " +
                     s.executor + " executor runs float32" + (bool_ok ? " and bool" : "") + " values only");
}

}  // namespace frugal::exec
