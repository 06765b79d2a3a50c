#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// A 1x1 stride-1 conv with one group, out[m][p] = sum_c W[m][c] X[c][p], whose
// operands are fetched as RGBA32F texels with no shared memory and no barrier:
// a fetch of tx is 4 consecutive pixels of one input channel, a fetch of tw 4
// consecutive input channels of one kernel ([M][C] rows, as packed for
// conv.comp). Each invocation keeps TM kernels x TQ quads of pixels in
// registers; per 4 channels it fetches TM + 4*TQ texels for 16*TM*TQ
// multiply-adds. Chosen on CPU devices (kernels/conv.cpp, docs/VULKAN.md): there
// a texel fetch is vector code while storage-buffer and shared-memory loads are
// loops over the SIMD lanes, and a barrier keeps the accumulators in memory.
// Needs C and H*W multiples of 4 and both operands at multiples of 16 bytes.
//
// Grid: x = invocations over (pixel blocks, kernel blocks) of one sample, pixel
// blocks fastest; z = sample.
#include "common.glsl"

layout(constant_id = 3) const uint C = 4;   // input channels, a multiple of 4
layout(constant_id = 4) const uint HW = 4;  // pixels per channel, a multiple of 4
layout(constant_id = 5) const uint M = 1;   // kernels
layout(constant_id = 6) const uint TM = 8;  // kernels per invocation
layout(constant_id = 7) const uint TQ = 2;  // quads of pixels per invocation

layout(binding = 6) uniform samplerBuffer tx;  // the input, [n][C][HW] by quads of pixels
layout(binding = 7) uniform samplerBuffer tw;  // the kernels, [M][C] by quads of channels

const uint QUADS = HW / 4u;                    // per channel
const uint PIXEL_BLOCKS = (QUADS + TQ - 1u) / TQ;
const uint KERNEL_BLOCKS = (M + TM - 1u) / TM;

void main() {
  const uint id = gl_GlobalInvocationID.x;
  if (id >= PIXEL_BLOCKS * KERNEL_BLOCKS) return;
  const uint q0 = (id % PIXEL_BLOCKS) * TQ, m0 = (id / PIXEL_BLOCKS) * TM;
  const uint sample_index = gl_WorkGroupID.z;
  // Rows and quads past the end read the last one (no bounds test in the loop); their sums are not stored.
  int wrow[TM], xq[TQ];
  [[unroll]] for (uint j = 0; j < TM; ++j) wrow[j] = int(pc.tw_off + min(m0 + j, M - 1u) * (C / 4u));
  [[unroll]] for (uint q = 0; q < TQ; ++q)
    xq[q] = int(pc.tx_off + sample_index * C * QUADS + min(q0 + q, QUADS - 1u));
  vec4 acc[TM * TQ];  // [kernel j][quad q]
  [[unroll]] for (uint i = 0; i < TM * TQ; ++i) acc[i] = vec4(0.0);
  for (uint c4 = 0; c4 < C / 4u; ++c4) {
    vec4 wv[TM];
    [[unroll]] for (uint j = 0; j < TM; ++j) wv[j] = texelFetch(tw, wrow[j] + int(c4));
    [[unroll]] for (uint e = 0; e < 4u; ++e) {
      const int row = int((4u * c4 + e) * QUADS);
      [[unroll]] for (uint q = 0; q < TQ; ++q) {
        const vec4 xv = texelFetch(tx, xq[q] + row);
        [[unroll]] for (uint j = 0; j < TM; ++j) acc[j * TQ + q] += wv[j][e] * xv;
      }
    }
  }
  const uint obase = pc.o_off + sample_index * M * HW;
  [[unroll]] for (uint j = 0; j < TM; ++j) {
    const uint m = m0 + j;
    if (m >= M) break;
    [[unroll]] for (uint q = 0; q < TQ; ++q) {
      if (q0 + q >= QUADS) break;
      const vec4 v = epilogue4(acc[j * TQ + q], m);
      const uint ob = obase + m * HW + 4u * (q0 + q);
      o[ob] = v.x;
      o[ob + 1u] = v.y;
      o[ob + 2u] = v.z;
      o[ob + 3u] = v.w;
    }
  }
}
