#version 450
#extension GL_GOOGLE_include_directive : require
// Gate values -> active-kernel lists for a gated convolution, on the device, so
// that the host never reads a count back. For each of pc.n samples: the indices
// m of the M gate values x[s*M + m] above the threshold (float bits in pc.p0),
// in increasing order, at u[s*LIST + k], padded with M up to a multiple of KPT
// (LIST = M rounded up to KPT); and the conv's indirect dispatch arguments
// {GX, padded count / KPT, 1} at u[pc.p1 + 3*s].
#include "common.glsl"

layout(constant_id = 3) const uint M = 1;
layout(constant_id = 4) const uint GX = 1;
layout(constant_id = 5) const uint KPT = 1;

void main() {
  const uint s = gl_GlobalInvocationID.x;
  if (s >= pc.n) return;
  const float threshold = uintBitsToFloat(pc.p0);
  const uint list = (M + KPT - 1u) / KPT * KPT;
  uint count = 0u;
  for (uint m = 0; m < M; ++m)
    if (x[pc.x_off + s * M + m] > threshold) u[pc.u_off + s * list + count++] = m;
  const uint padded = (count + KPT - 1u) / KPT * KPT;
  for (uint k = count; k < padded; ++k) u[pc.u_off + s * list + k] = M;
  u[pc.u_off + pc.p1 + 3u * s + 0u] = GX;
  u[pc.u_off + pc.p1 + 3u * s + 1u] = padded / KPT;
  u[pc.u_off + pc.p1 + 3u * s + 2u] = 1u;
}
