#version 450
#extension GL_GOOGLE_include_directive : require
// The second step of a model's kernel gate (docs/GATING.md) on the device: per
// sample s and kernel k of the gated conv, the switch of the paper's eq. 2,
// on iff sigmoid(b[k] + sum_c W[k, c] * pooled[s, c]) >= t (> t when STRICT is
// set in pc.p1), written as 1.0 / 0.0 at o[s*K + k] for gate_indices.spv. The
// 1x1 weights [K, C] and the bias [K] are in the layer's parameter block (word
// offsets WOFF, BOFF); the threshold's float bits are pc.p0. When pc.p2 is 1,
// the switched-on count is added to u[0] (the run report's activity). When
// pc.p3 is 1 (time_layer at a stated activity a, the float bits in pc.p0),
// kernel k is on iff floor((k+1) a) > floor(k a) instead (common/gate_activity.h).
// One work group per (sample, kernel) (a power of two invocations, at most
// 128): strided reads of the kernel's weight row, a tree in shared memory.
// FLAT = 1 (CPU devices, where each barrier is costly): one invocation per
// (sample, kernel), the whole row in one loop.
#include "common.glsl"

layout(constant_id = 3) const uint C = 1;  // input channels
layout(constant_id = 4) const uint K = 1;  // switches (the gated conv's kernels)
layout(constant_id = 5) const uint WOFF = 0;
layout(constant_id = 6) const uint BOFF = 0;
layout(constant_id = 7) const uint FLAT = 0;

shared float part[128];

void main() {
  const uint i = FLAT != 0u ? flat_index() : gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (i >= pc.n * K) return;
  const uint t = FLAT != 0u ? 0u : gl_LocalInvocationID.x, G = FLAT != 0u ? 1u : gl_WorkGroupSize.x;
  const uint s = i / K, k = i % K;
  float z = 0.0;
  for (uint c = t; c < C; c += G) z += w[pc.w_off + WOFF + k * C + c] * x[pc.x_off + s * C + c];
  if (FLAT == 0u) {
    part[t] = z;
    barrier();
    for (uint h = G / 2u; h > 0u; h >>= 1u) {
      if (t < h) part[t] += part[t + h];
      barrier();
    }
    if (t != 0u) return;
    z = part[0];
  }
  const float sw = 1.0 / (1.0 + exp(-(w[pc.w_off + BOFF + k] + z)));
  const float th = uintBitsToFloat(pc.p0);
  bool on = pc.p1 == 1u ? sw > th : sw >= th;
  if (pc.p3 == 1u) on = floor(float(k + 1u) * th) > floor(float(k) * th);
  o[pc.o_off + i] = on ? 1.0 : 0.0;
  if (on && pc.p2 == 1u) atomicAdd(u[pc.u_off], 1u);
}
