#version 450
#extension GL_GOOGLE_include_directive : require
// The second pass of a conv whose reduction was split (conv.comp with
// pc.p0 = KS > 1): out[s][m][p] = epilogue(sum over the KS slices of
// x[s][slice][m][p], m), one invocation per output value of the pc.n samples.
#include "common.glsl"

layout(constant_id = 3) const uint M = 1;    // output channels
layout(constant_id = 4) const uint HWO = 1;  // output pixels

void main() {
  const uint i = flat_index();
  if (i >= pc.n * M * HWO) return;
  const uint ks = max(pc.p0, 1u);
  const uint s = i / (M * HWO), r = i % (M * HWO);
  const uint xb = pc.x_off + s * ks * M * HWO + r;
  float v = 0.0;
  for (uint j = 0; j < ks; ++j) v += x[xb + j * M * HWO];
  o[pc.o_off + i] = epilogue(v, r / HWO);
}
