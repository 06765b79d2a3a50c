#version 450
#extension GL_GOOGLE_include_directive : require
// The first step of a model's kernel gate (docs/GATING.md) on the device: the
// global average of each input channel, o[s*C + c] for the pc.n * C planes of
// HW values of x (the gate's 1x1 conv then runs on this vector: the pool and
// the 1x1 commute, so this is the LKAM's function at a fraction of its cost).
#include "common.glsl"

layout(constant_id = 3) const uint HW = 1;  // values per plane

void main() {
  const uint i = flat_index();
  if (i >= pc.n) return;
  float sum = 0.0;
  for (uint p = 0; p < HW; ++p) sum += x[pc.x_off + i * HW + p];
  o[pc.o_off + i] = sum / float(HW);
}
