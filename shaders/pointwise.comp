#version 450
#extension GL_GOOGLE_include_directive : require
// A layer whose head is BatchNormalization, Relu, Clip or Sigmoid: the input
// copied through the per-channel epilogue. Channels are axis 1; INNER values per
// channel; pc.n is dim 0 (samples) of this dispatch.
#include "common.glsl"

layout(constant_id = 3) const uint C = 1;
layout(constant_id = 4) const uint INNER = 1;

void main() {
  const uint idx = flat_index();
  if (idx >= pc.n * C * INNER) return;
  o[pc.o_off + idx] = epilogue(x[pc.x_off + idx], (idx / INNER) % C);
}
