#version 450
#extension GL_GOOGLE_include_directive : require
// A gate's consumer Gemm after a Flatten (docs/GATING.md; the paper's section
// 3.2): row s of A is NB blocks of BS values (one block per channel of the
// flattened [N, C, H, W]), and only the blocks listed for s are read:
//   o[s][j] = epilogue(ALPHA * sum over listed blocks c, p < BS of
//             A[s][c*BS + p] * B[c*BS + p][j], j)
// The lists (z, per sample at s*(NB+1): the count, then block indices as
// floats) come from gate_inputs.spv. One invocation per (row, column) of pc.n
// rows and columns [pc.p2, pc.p2 + pc.p3); B's window starts at column pc.p2
// (B sliced by columns when it exceeds one binding, as in matmul.comp).
#include "common.glsl"

layout(constant_id = 3) const uint N = 1;
layout(constant_id = 4) const uint K = 1;
layout(constant_id = 5) const uint BS = 1;  // values per block
layout(constant_id = 6) const uint NB = 1;  // blocks per row (K = NB * BS)
layout(constant_id = 7) const uint B_SK = 1;
layout(constant_id = 8) const uint B_SN = 1;
layout(constant_id = 9) const float ALPHA = 1.0;

void main() {
  const uint i = flat_index();
  const uint cols = pc.p3;
  if (i >= pc.n * cols) return;
  const uint s = i / cols, lc = i % cols;
  const uint list = pc.z_off + s * (NB + 1u);
  const uint count = uint(z[list]);
  const uint arow = pc.x_off + s * K;
  float acc = 0.0;
  for (uint bi = 0; bi < count; ++bi) {
    const uint k0 = uint(z[list + 1u + bi]) * BS;
    for (uint p = 0; p < BS; ++p) acc += x[arow + k0 + p] * y[pc.y_off + (k0 + p) * B_SK + lc * B_SN];
  }
  const uint j = pc.p2 + lc;
  o[pc.o_off + s * N + j] = epilogue(ALPHA * acc, j);
}
