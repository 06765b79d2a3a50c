#version 450
#extension GL_GOOGLE_include_directive : require
// A gate's consumer conv (docs/GATING.md) skips the input channels that are
// all zero (a switched-off kernel of the gate's conv is an all-zero plane). Per
// sample s, a list in o at s*(C+1): the count, then the channel indices, as
// floats (exact below 2^24; conv.comp reads them from its y binding).
// pc.p0 = 0: one work group per (sample, channel) of pc.n * C planes of HW
//   values of x: 1.0 at o[s*(C+1) + 1 + c] when the plane has a nonzero value
//   (NaN included), else 0.0.
// pc.p0 = 1: one work group per sample of pc.n: those flags compacted in place
//   into the list (each invocation a run of channels, offsets from a scan in
//   shared memory). When pc.p2 is 1, the sample's (kernel, channel) pairs that
//   run are added to u[1] (the run report's effective MACs): its channels times
//   M, or times its switched-on kernels when the conv is gated (pc.p1 = 1: the
//   switches, 1.0 / 0.0 per kernel, at x[s*M + m]).
// Work groups: a power of two invocations, at most 128.
#include "common.glsl"
#include "gate_scan.glsl"

layout(constant_id = 3) const uint HW = 1;  // values per plane
layout(constant_id = 4) const uint C = 1;   // input channels
layout(constant_id = 5) const uint M = 1;   // the conv's kernels
layout(constant_id = 6) const uint FLAT = 0;  // 1 (CPU devices): pc.p0 = 0 with one invocation per plane

shared uint hit;

void flag_plane(uint plane, uint t, uint G) {
  if (t == 0u) hit = 0u;
  barrier();
  if (plane < pc.n * C) {
    bool any = false;
    for (uint p = t; p < HW && !any; p += G) any = x[pc.x_off + plane * HW + p] != 0.0;
    if (any) atomicOr(hit, 1u);
  }
  barrier();
  if (t == 0u && plane < pc.n * C) {
    const uint s = plane / C, c = plane % C;
    o[pc.o_off + s * (C + 1u) + 1u + c] = hit != 0u ? 1.0 : 0.0;
  }
}

void main() {
  const uint group = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;  // the same in a group
  const uint t = gl_LocalInvocationID.x, G = gl_WorkGroupSize.x;
  if (pc.p0 == 0u && FLAT != 0u) {
    const uint plane = flat_index();
    if (plane >= pc.n * C) return;
    bool any = false;
    for (uint p = 0; p < HW && !any; ++p) any = x[pc.x_off + plane * HW + p] != 0.0;
    o[pc.o_off + (plane / C) * (C + 1u) + 1u + plane % C] = any ? 1.0 : 0.0;
    return;
  }
  if (pc.p0 == 0u) {
    flag_plane(group, t, G);
    return;
  }
  if (group >= pc.n) return;
  const uint base = pc.o_off + group * (C + 1u);
  // Read this invocation's run of flags before any invocation writes the list over them.
  const uint chunk = (C + G - 1u) / G, c0 = min(C, t * chunk), c1 = min(C, c0 + chunk);
  uvec4 bits = uvec4(0u);
  uint mine = 0u;
  if (chunk <= 128u)
    for (uint c = c0; c < c1; ++c)
      if (o[base + 1u + c] != 0.0) {
        bits[(c - c0) >> 5u] |= 1u << ((c - c0) & 31u);
        ++mine;
      }
  const uint total = scan_counts(mine, t, G);  // leaves this invocation's offset in scan_at
  if (chunk <= 128u) {
    uint at = scan_at;
    for (uint c = c0; c < c1; ++c)
      if ((bits[(c - c0) >> 5u] & (1u << ((c - c0) & 31u))) != 0u) o[base + 1u + at++] = float(c);
    if (t == 0u) o[base] = float(total);
  } else if (t == 0u) {  // more than 128 channels per invocation: one pass
    uint count = 0u;
    for (uint c = 0; c < C; ++c)
      if (o[base + 1u + c] != 0.0) o[base + 1u + count++] = float(c);
    o[base] = float(count);
  }
  if (pc.p2 != 1u) return;
  memoryBarrierBuffer();
  barrier();
  const uint channels = uint(o[base]);
  if (pc.p1 == 1u) {
    uint kernels = 0u;
    for (uint m = t; m < M; m += G)
      if (x[pc.x_off + group * M + m] > 0.5) ++kernels;
    const uint all_kernels = scan_counts(kernels, t, G);
    if (t == 0u) atomicAdd(u[pc.u_off + 1u], channels * all_kernels);
  } else if (t == 0u) {
    atomicAdd(u[pc.u_off + 1u], channels * M);
  }
}
