// The elementwise functions both executors run, numbered as the Vulkan
// shader's OP constant (shaders/elementwise.comp): arithmetic and comparisons
// of two operands, Where of three, and NonZero (Cast to bool) of one.
#pragma once

#include "common/kernel_spec.h"

namespace frugal::exec {

enum class ElementwiseFn {
  Add = 0,
  Sub = 1,
  Mul = 2,
  Div = 3,
  Greater = 4,
  GreaterOrEqual = 5,
  Where = 6,
  NonZero = 7
};

// The function of node s (an ops::Arithmetic, ops::Comparison or ops::Where).
ElementwiseFn elementwise_fn(const KernelSpec& s);
// How many operands it reads.
inline size_t operand_count(ElementwiseFn f) {
  return f == ElementwiseFn::Where ? 3 : f == ElementwiseFn::NonZero ? 1 : 2;
}

// The values of input i as floats: a float32/float64 or bool (0 / 1) constant.
std::vector<float> constant_values(const KernelSpec& s, size_t i, const char* role);
// Input i must be a float32 activation or constant, or bool where `bool_ok`.
void require_operand(const KernelSpec& s, size_t i, const char* role, bool bool_ok);

}  // namespace frugal::exec
