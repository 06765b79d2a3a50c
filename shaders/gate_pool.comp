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
// pc.p0 = 1 (a gated conv that is also a gate's consumer): the same pass
// writes gate_inputs.spv's flags, 1.0 / 0.0 (as float bits) at
// u[s*(C+1) + 1 + c] for a plane with / without a nonzero value (NaN included).
#include "common.glsl"

layout(constant_id = 3) const uint HW = 1;  // values per plane
layout(constant_id = 4) const uint C = 1;   // planes per sample
layout(constant_id = 5) const uint FLAT = 0;  // 1 (CPU devices): one invocation per plane, no barrier

shared float part[128];
shared uint hit;

void main() {
  if (FLAT != 0u) {
    const uint plane = flat_index();
    if (plane >= pc.n) return;
    float sum = 0.0;
    bool any = false;
    for (uint p = 0; p < HW; ++p) {
      const float v = x[pc.x_off + plane * HW + p];
      sum += v;
      any = any || v != 0.0;
    }
    o[pc.o_off + plane] = sum / float(HW);
    if (pc.p0 == 1u) u[pc.u_off + (plane / C) * (C + 1u) + 1u + plane % C] = floatBitsToUint(any ? 1.0 : 0.0);
    return;
  }
  const uint plane = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;  // the same in a group
  const uint t = gl_LocalInvocationID.x, G = gl_WorkGroupSize.x;
  if (t == 0u) hit = 0u;
  float sum = 0.0;
  bool any = false;
  if (plane < pc.n)
    for (uint p = t; p < HW; p += G) {
      const float v = x[pc.x_off + plane * HW + p];
      sum += v;
      any = any || v != 0.0;
    }
  part[t] = sum;
  barrier();
  if (any) atomicOr(hit, 1u);
  for (uint h = G / 2u; h > 0u; h >>= 1u) {
    if (t < h) part[t] += part[t + h];
    barrier();
  }
  if (t != 0u || plane >= pc.n) return;
  o[pc.o_off + plane] = part[0] / float(HW);
  if (pc.p0 == 1u) u[pc.u_off + (plane / C) * (C + 1u) + 1u + plane % C] = floatBitsToUint(hit != 0u ? 1.0 : 0.0);
}
