#version 450
#extension GL_GOOGLE_include_directive : require
// Gate values -> active-kernel lists for a gated convolution, on the device, so
// that the host never reads a count back. For each of pc.n samples: the indices
// m of the M gate values x[s*M + m] above the threshold (float bits in pc.p0),
// in increasing order, at u[s*LIST + k], padded with M up to a multiple of KPT
// (LIST = M rounded up to KPT); and the conv's indirect dispatch arguments
// {GX, padded count / KPT, max(pc.p2, 1)} at u[pc.p1 + 3*s] (pc.p2: the slices
// of a split reduction, conv.comp's z). One work group per sample (a
// power of two invocations, at most 128), each invocation a run of kernels,
// their places from a scan in shared memory.
#include "common.glsl"
#include "gate_scan.glsl"

layout(constant_id = 3) const uint M = 1;
layout(constant_id = 4) const uint GX = 1;
layout(constant_id = 5) const uint KPT = 1;

void main() {
  const uint s = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x;  // the same in a group
  if (s >= pc.n) return;
  const uint t = gl_LocalInvocationID.x, G = gl_WorkGroupSize.x;
  const float threshold = uintBitsToFloat(pc.p0);
  const uint list = (M + KPT - 1u) / KPT * KPT;
  const uint chunk = (M + G - 1u) / G, m0 = min(M, t * chunk), m1 = min(M, m0 + chunk);
  uint mine = 0u;
  for (uint m = m0; m < m1; ++m)
    if (x[pc.x_off + s * M + m] > threshold) ++mine;
  const uint count = scan_counts(mine, t, G);
  uint at = scan_at;
  for (uint m = m0; m < m1; ++m)
    if (x[pc.x_off + s * M + m] > threshold) u[pc.u_off + s * list + at++] = m;
  const uint padded = (count + KPT - 1u) / KPT * KPT;
  for (uint k = count + t; k < padded; k += G) u[pc.u_off + s * list + k] = M;
  if (t != 0u) return;
  u[pc.u_off + pc.p1 + 3u * s + 0u] = GX;
  u[pc.u_off + pc.p1 + 3u * s + 1u] = padded / KPT;
  u[pc.u_off + pc.p1 + 3u * s + 2u] = max(pc.p2, 1u);
}
