#version 450
#extension GL_GOOGLE_include_directive : require
// Elementwise ops of up to three operands with numpy broadcasting, up to rank 6
// after the host has dropped size-1 dims and merged contiguous ones. Dim 0 (D0)
// is pc.n; each operand has one element stride per output dim (0 where it is
// broadcast). OP as frugal::exec::ElementwiseFn (plugins/common/elementwise_fn.h):
// 0 Add, 1 Sub, 2 Mul, 3 Div, 4 Greater, 5 GreaterOrEqual (1 or 0),
// 6 Where (x: condition, y, z), 7 NonZero (Cast to bool). An Add applies the
// per-channel epilogue (common.glsl; none unless activations joined its layer)
// to its result: C channels of INNER values per sample.
#include "common.glsl"

layout(constant_id = 3) const uint D1 = 1;
layout(constant_id = 4) const uint D2 = 1;
layout(constant_id = 5) const uint D3 = 1;
layout(constant_id = 6) const uint D4 = 1;
layout(constant_id = 7) const uint D5 = 1;
layout(constant_id = 8) const uint SA0 = 0;
layout(constant_id = 9) const uint SA1 = 0;
layout(constant_id = 10) const uint SA2 = 0;
layout(constant_id = 11) const uint SA3 = 0;
layout(constant_id = 12) const uint SA4 = 0;
layout(constant_id = 13) const uint SA5 = 0;
layout(constant_id = 14) const uint SB0 = 0;
layout(constant_id = 15) const uint SB1 = 0;
layout(constant_id = 16) const uint SB2 = 0;
layout(constant_id = 17) const uint SB3 = 0;
layout(constant_id = 18) const uint SB4 = 0;
layout(constant_id = 19) const uint SB5 = 0;
layout(constant_id = 20) const uint SC0 = 0;
layout(constant_id = 21) const uint SC1 = 0;
layout(constant_id = 22) const uint SC2 = 0;
layout(constant_id = 23) const uint SC3 = 0;
layout(constant_id = 24) const uint SC4 = 0;
layout(constant_id = 25) const uint SC5 = 0;
layout(constant_id = 26) const uint OP = 0;
layout(constant_id = 27) const uint C = 1;
layout(constant_id = 28) const uint INNER = 1;

void main() {
  const uint idx = flat_index();
  if (idx >= pc.n * D1 * D2 * D3 * D4 * D5) return;
  uint r = idx;
  const uint i5 = r % D5; r /= D5;
  const uint i4 = r % D4; r /= D4;
  const uint i3 = r % D3; r /= D3;
  const uint i2 = r % D2; r /= D2;
  const uint i1 = r % D1; r /= D1;
  const uint i0 = r;
  const float a = x[pc.x_off + i0 * SA0 + i1 * SA1 + i2 * SA2 + i3 * SA3 + i4 * SA4 + i5 * SA5];
  float v;
  if (OP == 7u) {
    v = a != 0.0 ? 1.0 : 0.0;
  } else {
    const float b = y[pc.y_off + i0 * SB0 + i1 * SB1 + i2 * SB2 + i3 * SB3 + i4 * SB4 + i5 * SB5];
    if (OP == 0u) v = epilogue(a + b, (idx / INNER) % C);
    else if (OP == 1u) v = a - b;
    else if (OP == 2u) v = a * b;
    else if (OP == 3u) v = a / b;
    else if (OP == 4u) v = a > b ? 1.0 : 0.0;
    else if (OP == 5u) v = a >= b ? 1.0 : 0.0;
    else v = a != 0.0 ? b : z[pc.z_off + i0 * SC0 + i1 * SC1 + i2 * SC2 + i3 * SC3 + i4 * SC4 + i5 * SC5];
  }
  o[pc.o_off + idx] = v;
}
