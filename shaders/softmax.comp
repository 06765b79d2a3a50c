#version 450
#extension GL_GOOGLE_include_directive : require
// Softmax along an axis of LEN values spaced INNER apart; one invocation per
// row, pc.p0 rows. Max-subtracted.
#include "common.glsl"

layout(constant_id = 3) const uint LEN = 1;
layout(constant_id = 4) const uint INNER = 1;

void main() {
  const uint r = flat_index();
  if (r >= pc.p0) return;
  const uint base = (r / INNER) * LEN * INNER + r % INNER;
  float mx = x[pc.x_off + base];
  for (uint k = 1; k < LEN; ++k) mx = max(mx, x[pc.x_off + base + k * INNER]);
  float sum = 0.0;
  for (uint k = 0; k < LEN; ++k) {
    const float e = exp(x[pc.x_off + base + k * INNER] - mx);
    o[pc.o_off + base + k * INNER] = e;
    sum += e;
  }
  const float inv = 1.0 / sum;
  for (uint k = 0; k < LEN; ++k) o[pc.o_off + base + k * INNER] *= inv;
}
