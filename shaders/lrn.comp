#version 450
#extension GL_GOOGLE_include_directive : require
// LRN across channels: y = x / (BIAS + ALPHA / SIZE * sum of x^2 over the
// channel window [c - floor((SIZE-1)/2), c + ceil((SIZE-1)/2)])^BETA.
#include "common.glsl"

layout(constant_id = 3) const uint C = 1;
layout(constant_id = 4) const uint INNER = 1;
layout(constant_id = 5) const uint SIZE = 1;
layout(constant_id = 6) const float ALPHA = 0.0001;
layout(constant_id = 7) const float BETA = 0.75;
layout(constant_id = 8) const float BIAS = 1.0;

void main() {
  const uint idx = flat_index();
  if (idx >= pc.n * C * INNER) return;
  const uint inner = idx % INNER, c = (idx / INNER) % C, s = idx / (INNER * C);
  const int below = int(SIZE - 1u) / 2, above = int(SIZE - 1u) - below;
  const int c0 = max(0, int(c) - below), c1 = min(int(C) - 1, int(c) + above);
  const uint base = pc.x_off + s * C * INNER + inner;
  float sq = 0.0;
  for (int cc = c0; cc <= c1; ++cc) {
    const float v = x[base + uint(cc) * INNER];
    sq += v * v;
  }
  o[pc.o_off + idx] = x[base + c * INNER] / pow(BIAS + ALPHA / float(SIZE) * sq, BETA);
}
