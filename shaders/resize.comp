#version 450
#extension GL_GOOGLE_include_directive : require
// Resize, mode nearest: pc.n planes (sample x channel) of OUT_PLANE values,
// each the input value at the plane position u[i] (a table made on the host,
// plugins/common/resize_nearest.h) of an input plane of IN_PLANE values.
#include "common.glsl"

layout(constant_id = 3) const uint IN_PLANE = 1;
layout(constant_id = 4) const uint OUT_PLANE = 1;

void main() {
  const uint idx = flat_index();
  if (idx >= pc.n * OUT_PLANE) return;
  const uint plane = idx / OUT_PLANE;
  o[pc.o_off + idx] = x[pc.x_off + plane * IN_PLANE + u[pc.u_off + idx % OUT_PLANE]];
}
