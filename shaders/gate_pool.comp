#version 450
#extension GL_GOOGLE_include_directive : require
// The first step of a model's kernel gate (docs/GATING.md) on the device: the
// global average of each input channel, o[s*C + c] for the pc.n * C planes of
// HW values of x (the gate's 1x1 conv then runs on this vector: the pool and
// the 1x1 commute, so this is the LKAM's function at a fraction of its cost).
// One work group per plane (a power of two invocations, at most 128): each
// invocation sums a strided part, then a tree in shared memory. One invocation
// per plane left a big GPU nearly idle at batch 1 (3 planes of 224 x 224
// values read one after the other in alexnet's first gate).
#include "common.glsl"

layout(constant_id = 3) const uint HW = 1;  // values per plane

shared float part[128];

void main() {
  const uint plane = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;  // the same in a group
  const uint t = gl_LocalInvocationID.x, G = gl_WorkGroupSize.x;
  float sum = 0.0;
  if (plane < pc.n)
    for (uint p = t; p < HW; p += G) sum += x[pc.x_off + plane * HW + p];
  part[t] = sum;
  barrier();
  for (uint h = G / 2u; h > 0u; h >>= 1u) {
    if (t < h) part[t] += part[t + h];
    barrier();
  }
  if (t == 0u && plane < pc.n) o[pc.o_off + plane] = part[0] / float(HW);
}
