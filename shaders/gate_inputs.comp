#version 450
#extension GL_GOOGLE_include_directive : require
// A gate's consumer conv (docs/GATING.md) skips the input channels that are
// all zero (a switched-off kernel of the gate's conv is an all-zero plane). Per
// sample s, a list in o at s*(C+1): the count, then the channel indices, as
// floats (exact below 2^24; conv.comp reads them from its y binding).
// pc.p0 = 0: one invocation per (sample, channel) of pc.n * C planes of HW
//   values of x: 1.0 at o[s*(C+1) + 1 + c] when the plane has a nonzero value
//   (NaN included), else 0.0.
// pc.p0 = 1: one invocation per sample of pc.n: those flags compacted in place
//   into the list. When pc.p2 is 1, the sample's (kernel, channel) pairs that
//   run are added to u[1] (the run report's effective MACs): its channels times
//   M, or times its switched-on kernels when the conv is gated (pc.p1 = 1: the
//   switches, 1.0 / 0.0 per kernel, at x[s*M + m]).
#include "common.glsl"

layout(constant_id = 3) const uint HW = 1;  // values per plane
layout(constant_id = 4) const uint C = 1;   // input channels
layout(constant_id = 5) const uint M = 1;   // the conv's kernels

void main() {
  const uint i = flat_index();
  if (pc.p0 == 0u) {
    if (i >= pc.n * C) return;
    const uint s = i / C, c = i % C;
    bool any = false;
    for (uint p = 0; p < HW && !any; ++p) any = x[pc.x_off + i * HW + p] != 0.0;
    o[pc.o_off + s * (C + 1u) + 1u + c] = any ? 1.0 : 0.0;
    return;
  }
  if (i >= pc.n) return;
  const uint base = pc.o_off + i * (C + 1u);
  uint count = 0u;
  for (uint c = 0; c < C; ++c)
    if (o[base + 1u + c] != 0.0) o[base + 1u + count++] = float(c);
  o[base] = float(count);
  if (pc.p2 != 1u) return;
  uint kernels = M;
  if (pc.p1 == 1u) {
    kernels = 0u;
    for (uint m = 0; m < M; ++m)
      if (x[pc.x_off + i * M + m] > 0.5) ++kernels;
  }
  atomicAdd(u[pc.u_off + 1u], count * kernels);
}
