#version 450
#extension GL_GOOGLE_include_directive : require
// Gate values -> active-kernel lists for a gated convolution, on the device, so
// that the host never reads a count back. For each of pc.n samples: the indices
// m of the M gate values x[s*M + m] above the threshold (float bits in pc.p0),
// in increasing order, at u[s*M + k]; and the conv's indirect dispatch
// arguments {GX, count, 1} at u[pc.p1 + 3*s].
#include "common.glsl"

layout(constant_id = 3) const uint M = 1;
layout(constant_id = 4) const uint GX = 1;

void main() {
  const uint s = gl_GlobalInvocationID.x;
  if (s >= pc.n) return;
  const float threshold = uintBitsToFloat(pc.p0);
  uint count = 0u;
  for (uint m = 0; m < M; ++m)
    if (x[pc.x_off + s * M + m] > threshold) u[pc.u_off + s * M + count++] = m;
  u[pc.u_off + pc.p1 + 3u * s + 0u] = GX;
  u[pc.u_off + pc.p1 + 3u * s + 1u] = count;
  u[pc.u_off + pc.p1 + 3u * s + 2u] = 1u;
}
