#version 450
#extension GL_GOOGLE_include_directive : require
// Block copy: pc.n blocks of IN_BLOCK values go to blocks of OUT_BLOCK values
// at OUT_OFFSET. Concat runs it once per input; Flatten, Reshape, Identity and
// Dropout as layer heads copy with IN_BLOCK = OUT_BLOCK.
#include "common.glsl"

layout(constant_id = 3) const uint IN_BLOCK = 1;
layout(constant_id = 4) const uint OUT_BLOCK = 1;
layout(constant_id = 5) const uint OUT_OFFSET = 0;

void main() {
  const uint idx = flat_index();
  if (idx >= pc.n * IN_BLOCK) return;
  o[pc.o_off + (idx / IN_BLOCK) * OUT_BLOCK + OUT_OFFSET + idx % IN_BLOCK] = x[pc.x_off + idx];
}
