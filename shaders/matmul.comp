#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// Tiled matrix product for Gemm and MatMul:
//   o[b][i][j] = epilogue(ALPHA * sum_k A[b][i][k] B[b][k][j] + BETA * C[i][j], j)
// A is binding x, B binding y, C binding z; each is read through strides, so
// transposed operands, folded batch dims and broadcast batch dims need no copy.
// One TILE x TILE work group computes one output tile; z is the batch index.
// The dispatch covers rows [0, pc.p0) and columns [pc.p2, pc.p2 + pc.p3) of N;
// B's window starts at column pc.p2 (so a B too large for one binding is split
// by columns). pc.p1 batch items.
#include "common.glsl"

layout(constant_id = 3) const uint TILE = 16;
layout(constant_id = 4) const uint N = 1;
layout(constant_id = 5) const uint K = 1;
layout(constant_id = 6) const uint A_SR = 1;   // A stride along rows (i)
layout(constant_id = 7) const uint A_SK = 1;   // ... along k
layout(constant_id = 8) const uint B_SK = 1;
layout(constant_id = 9) const uint B_SN = 1;   // B stride along columns (j)
layout(constant_id = 10) const uint BD1 = 1;   // batch index b = (b0, b1, b2) over (*, BD1, BD2)
layout(constant_id = 11) const uint BD2 = 1;
layout(constant_id = 12) const uint A_S0 = 0;
layout(constant_id = 13) const uint A_S1 = 0;
layout(constant_id = 14) const uint A_S2 = 0;
layout(constant_id = 15) const uint B_S0 = 0;
layout(constant_id = 16) const uint B_S1 = 0;
layout(constant_id = 17) const uint B_S2 = 0;
layout(constant_id = 18) const uint HAS_C = 0;
layout(constant_id = 19) const uint C_SR = 0;
layout(constant_id = 20) const uint C_SN = 0;
layout(constant_id = 21) const float ALPHA = 1.0;
layout(constant_id = 22) const float BETA = 1.0;
// B_F16 = 1 (a constant B with option "weight_storage": "fp16"): B is IEEE
// halves, two per word in packHalf2x16's order, at half indices from
// 2 * pc.y_off; the strides count halves. Half the bytes; the products stay fp32.
layout(constant_id = 23) const uint B_F16 = 0;
layout(std430, binding = 1) readonly buffer BYH { uint yh[]; };  // input 1 by pairs of halves (B_F16)

// B's element e (counted from the window's start in floats, or halves).
float b_at(uint e) { return B_F16 != 0u ? unpackHalf2x16(yh[e / 2u])[e % 2u] : y[e]; }
uint b_window() { return pc.y_off * (B_F16 != 0u ? 2u : 1u); }

#if defined(FEW_ROWS) && defined(SPLIT_K)
// matmul_rows_k.spv, for few rows on a GPU whose matmul_rows dispatch would
// have too few work groups to fill it (a fully connected layer at batch 1:
// 1000 columns are 16 groups of 64; kernels/matmul.cpp): one work group of KT
// invocations per (column, block of RB rows, batch item); invocation t sums
// k = t, t + KT, ... (consecutive invocations: consecutive k, coalesced when
// B_SK is 1), then the group adds its KT partial sums in shared memory.
const uint RB = 4u;
const uint KT = 64u;  // = local_size_x
shared float part[RB * KT];

void main() {
  const uint rows = pc.p0, col0 = pc.p2;
  const uint lcol = gl_WorkGroupID.x, lx = gl_LocalInvocationID.x;
  const uint row0 = gl_WorkGroupID.y * RB;
  const uint b = gl_WorkGroupID.z;
  const uint b2 = b % BD2, b1 = (b / BD2) % BD1, b0 = b / (BD1 * BD2);
  const uint abase = pc.x_off + b0 * A_S0 + b1 * A_S1 + b2 * A_S2;
  const uint bbase = b_window() + b0 * B_S0 + b1 * B_S1 + b2 * B_S2 + lcol * B_SN;
  uint ar[RB];  // A's row starts; rows past the end read row0's (their results are dropped)
  [[unroll]] for (uint r = 0; r < RB; ++r) ar[r] = abase + (row0 + r < rows ? row0 + r : row0) * A_SR;
  float acc[RB];
  [[unroll]] for (uint r = 0; r < RB; ++r) acc[r] = 0.0;
  for (uint k = lx; k < K; k += KT) {
    const float bv = b_at(bbase + k * B_SK);
    [[unroll]] for (uint r = 0; r < RB; ++r) acc[r] += x[ar[r] + k * A_SK] * bv;
  }
  [[unroll]] for (uint r = 0; r < RB; ++r) part[r * KT + lx] = acc[r];
  barrier();
  for (uint h = KT / 2u; h > 0u; h /= 2u) {
    if (lx < h)
      [[unroll]] for (uint r = 0; r < RB; ++r) part[r * KT + lx] += part[r * KT + lx + h];
    barrier();
  }
  if (lx >= RB || row0 + lx >= rows) return;
  const uint row = row0 + lx, j = col0 + lcol;
  float v = ALPHA * part[lx * KT];
  if (HAS_C != 0u) v += BETA * z[pc.z_off + row * C_SR + j * C_SN];
  o[pc.o_off + (b * rows + row) * N + j] = epilogue(v, j);
}
#elif defined(FEW_ROWS)
// matmul_rows.spv, for products of few rows (a fully connected layer at a
// small batch): a 16 x 16 tile would leave most of its rows idle. Each
// invocation computes one column for RB rows, reading B's column once for
// them (consecutive invocations: consecutive columns, coalesced when B_SN is
// 1) and A's values, the same for the whole work group, from the cache.
// Work groups: x = column groups, y = row blocks of RB, z = batch index.
const uint RB = 4u;

void main() {
  const uint rows = pc.p0, col0 = pc.p2, cols = pc.p3;
  const uint lcol = gl_GlobalInvocationID.x;
  const uint row0 = gl_WorkGroupID.y * RB;
  const uint b = gl_WorkGroupID.z;
  if (lcol >= cols) return;
  const uint b2 = b % BD2, b1 = (b / BD2) % BD1, b0 = b / (BD1 * BD2);
  const uint abase = pc.x_off + b0 * A_S0 + b1 * A_S1 + b2 * A_S2;
  const uint bbase = b_window() + b0 * B_S0 + b1 * B_S1 + b2 * B_S2 + lcol * B_SN;
  uint ar[RB];  // A's row starts; rows past the end read row0's (their results are dropped)
  [[unroll]] for (uint r = 0; r < RB; ++r) ar[r] = abase + (row0 + r < rows ? row0 + r : row0) * A_SR;
  float acc[RB];
  [[unroll]] for (uint r = 0; r < RB; ++r) acc[r] = 0.0;
  for (uint k = 0; k < K; ++k) {
    const float bv = b_at(bbase + k * B_SK);
    [[unroll]] for (uint r = 0; r < RB; ++r) acc[r] += x[ar[r] + k * A_SK] * bv;
  }
  const uint j = col0 + lcol;
  [[unroll]] for (uint r = 0; r < RB; ++r) {
    const uint row = row0 + r;
    if (row >= rows) break;
    float v = ALPHA * acc[r];
    if (HAS_C != 0u) v += BETA * z[pc.z_off + row * C_SR + j * C_SN];
    o[pc.o_off + (b * rows + row) * N + j] = epilogue(v, j);
  }
}
#else
shared float As[TILE * TILE];
shared float Bs[TILE * TILE];

void main() {
  const uint rows = pc.p0, col0 = pc.p2, cols = pc.p3;
  const uint lx = gl_LocalInvocationID.x, ly = gl_LocalInvocationID.y;
  const uint row = gl_WorkGroupID.y * TILE + ly;
  const uint lcol = gl_WorkGroupID.x * TILE + lx;  // column relative to col0
  const uint b = gl_WorkGroupID.z;
  const uint b2 = b % BD2, b1 = (b / BD2) % BD1, b0 = b / (BD1 * BD2);
  const uint abase = pc.x_off + b0 * A_S0 + b1 * A_S1 + b2 * A_S2;
  const uint bbase = b_window() + b0 * B_S0 + b1 * B_S1 + b2 * B_S2;
  float acc = 0.0;
  for (uint t = 0; t < K; t += TILE) {
    const uint ka = t + lx, kb = t + ly;
    const uint arow = gl_WorkGroupID.y * TILE + ly;
    const uint bcol = gl_WorkGroupID.x * TILE + lx;
    As[ly * TILE + lx] = (arow < rows && ka < K) ? x[abase + arow * A_SR + ka * A_SK] : 0.0;
    Bs[ly * TILE + lx] = (bcol < cols && kb < K) ? b_at(bbase + kb * B_SK + bcol * B_SN) : 0.0;
    barrier();
    for (uint kk = 0; kk < TILE; ++kk) acc += As[ly * TILE + kk] * Bs[kk * TILE + lx];
    barrier();
  }
  if (row >= rows || lcol >= cols) return;
  const uint j = col0 + lcol;
  float v = ALPHA * acc;
  if (HAS_C != 0u) v += BETA * z[pc.z_off + row * C_SR + j * C_SN];
  o[pc.o_off + (b * rows + row) * N + j] = epilogue(v, j);
}
#endif
