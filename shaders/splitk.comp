#version 450
#extension GL_GOOGLE_include_directive : require
// The second pass of a conv whose reduction was split (conv.comp with
// pc.p0 = KS > 1): out[s][m][p] = epilogue(sum over the KS slices of
// x[s][slice][m][p], m), one invocation per output value of the pc.n samples.
// pc.p1 = 1 (a gated conv): 0 where kernel m of sample s is switched off, its
// gate value y[s*M + m] not above the threshold (float bits in pc.p2), as
// gate_indices.comp decides; its slices were not written.
#include "common.glsl"

layout(constant_id = 3) const uint M = 1;    // output channels
layout(constant_id = 4) const uint HWO = 1;  // output pixels

void main() {
  const uint i = flat_index();
  if (i >= pc.n * M * HWO) return;
  const uint ks = max(pc.p0, 1u);
  const uint s = i / (M * HWO), r = i % (M * HWO);
  if (pc.p1 == 1u && !(y[pc.y_off + s * M + r / HWO] > uintBitsToFloat(pc.p2))) {
    o[pc.o_off + i] = 0.0;
    return;
  }
  const uint xb = pc.x_off + s * ks * M * HWO + r;
  float v = 0.0;
  for (uint j = 0; j < ks; ++j) v += x[xb + j * M * HWO];
  o[pc.o_off + i] = epilogue(v, r / HWO);
}
