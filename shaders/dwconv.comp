#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// Depthwise convolution (one input channel per group; a channel multiplier
// MG >= 1 allowed): output kernel m reads input channel m / MG only, so there
// is no reduction over channels to tile. A work group covers WG consecutive
// groups of OPT outputs along a row of one kernel: each invocation reads every
// weight once for its OPT outputs and each input column of a tap row once for
// all the taps and outputs that use it (with stride 1, OPT + KW - 1 loads for
// OPT * KW products), and the bounds tests are paid only by the invocations
// that touch the left or right padding.
//
// GATED (default build, dwconv_gated.spv): work-group row y is slot y of this
// sample's list of active kernels u[u_off + y] (M: none); one
// vkCmdDispatchIndirect per sample. DENSE (dwconv_dense.spv): y = kernel,
// z = sample.
// TEXEL (with DENSE, dwconv_texel.spv; CPU devices, option "conv_texel"): the
// input and the kernels read through R32F texel views (tx, tw) instead of
// storage buffers: on lavapipe a texel fetch is vector code, a storage-buffer
// load a loop over the SIMD lanes (docs/VULKAN.md, "Texel operands").
#include "common.glsl"

#ifdef TEXEL
layout(binding = 6) uniform samplerBuffer tx;
layout(binding = 7) uniform samplerBuffer tw;
#define X_AT(i) texelFetch(tx, int(i)).x
#define W_AT(i) texelFetch(tw, int(i)).x
#define X_OFF pc.tx_off
#define W_OFF pc.tw_off
#else
#define X_AT(i) x[i]
#define W_AT(i) w[i]
#define X_OFF pc.x_off
#define W_OFF pc.w_off
#endif

layout(constant_id = 3) const uint C = 1;  // input channels
layout(constant_id = 4) const uint H = 1;
layout(constant_id = 5) const uint W = 1;
layout(constant_id = 6) const uint M = 1;  // output channels (kernels)
layout(constant_id = 7) const uint HO = 1;
layout(constant_id = 8) const uint WO = 1;
layout(constant_id = 9) const uint KH = 1;
layout(constant_id = 10) const uint KW = 1;
layout(constant_id = 11) const uint SH = 1;
layout(constant_id = 12) const uint SW = 1;
layout(constant_id = 13) const uint DH = 1;
layout(constant_id = 14) const uint DW = 1;
layout(constant_id = 15) const int PT = 0;
layout(constant_id = 16) const int PL = 0;
layout(constant_id = 18) const uint MG = 1;  // output channels per group (channel multiplier)

const uint OPT = 4;                            // outputs per invocation, along a row
const uint XQ = (WO + OPT - 1u) / OPT;         // invocations per output row
const uint SPAN = (OPT - 1u) * SW + (KW - 1u) * DW + 1u;  // input columns one invocation reads per tap row

void main() {
  const uint g = gl_GlobalInvocationID.x;
#ifdef DENSE
  const uint m = gl_WorkGroupID.y;
  const uint sample_index = gl_WorkGroupID.z;
#else
  const uint m = u[pc.u_off + gl_WorkGroupID.y];
  const uint sample_index = pc.s;
#endif
  if (m >= M || g >= HO * XQ) return;
  const uint oh = g / XQ, ow0 = (g % XQ) * OPT;
  const uint xc = X_OFF + (sample_index * C + m / MG) * H * W;
  const uint wb = W_OFF + m * KH * KW;
  const int h0 = int(oh * SH) - PT, w0 = int(ow0 * SW) - PL;
  float acc[OPT];
  [[unroll]] for (uint q = 0; q < OPT; ++q) acc[q] = 0.0;
  const bool inside = w0 >= 0 && w0 + int(SPAN) <= int(W);
  for (uint i = 0; i < KH; ++i) {
    const int ih = h0 + int(i * DH);
    if (ih < 0 || ih >= int(H)) continue;
    const uint row = xc + uint(ih) * W;
    float v[SPAN];
    [[unroll]] for (uint c = 0; c < SPAN; ++c) {
      const int iw = w0 + int(c);
      v[c] = (inside || (iw >= 0 && iw < int(W))) ? X_AT(row + uint(iw)) : 0.0;
    }
    [[unroll]] for (uint j = 0; j < KW; ++j) {
      const float wt = W_AT(wb + i * KW + j);
      [[unroll]] for (uint q = 0; q < OPT; ++q) acc[q] += v[q * SW + j * DW] * wt;
    }
  }
  const uint ob = pc.o_off + (sample_index * M + m) * HO * WO + oh * WO;
  [[unroll]] for (uint q = 0; q < OPT; ++q)
    if (ow0 + q < WO) o[ob + ow0 + q] = epilogue(acc[q], m);
}
