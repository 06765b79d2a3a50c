#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// Direct convolution (1-D and 2-D; groups, depthwise, strides, dilations,
// asymmetric pads) with the layer's per-channel epilogue (bias, BatchNorm,
// Relu/Clip/Sigmoid), for grouped and depthwise convs (one group: conv.comp).
// One invocation computes one output pixel for KPT output kernels, so each
// input value loaded serves KPT kernels (the host uses KPT = 1: kernels of
// different groups read different channels).
//
// GATED (default build, conv_direct_gated.spv): gating-ready. Work-group row y covers
// slots [KPT*y, KPT*y + KPT) of this sample's list of active output kernels
// u[u_off + slot]; lists are padded with M (no kernel) to a multiple of KPT. The
// host launches one vkCmdDispatchIndirect per sample whose y count is the
// padded list length / KPT, written on the device (all M kernels when the layer
// is ungated), so the count is never read back.
// DENSE (conv_direct_dense.spv): plain dispatch, y = kernels / KPT, z = sample; kept so
// a benchmark can measure what the indirection costs.
// SKIP_IN (a gate's consumer, groups = 1): per sample, y holds at
// sample*(C+1) the count of input channels that are not all zero, then their
// indices (as floats, gate_inputs.comp); only those are read.
#include "common.glsl"

layout(constant_id = 3) const uint C = 1;       // input channels
layout(constant_id = 4) const uint H = 1;
layout(constant_id = 5) const uint W = 1;
layout(constant_id = 6) const uint M = 1;       // output channels (kernels)
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
layout(constant_id = 17) const uint CG = 1;     // input channels per group
layout(constant_id = 18) const uint MG = 1;     // output channels per group
layout(constant_id = 19) const uint KPT = 1;    // output kernels per invocation
layout(constant_id = 20) const uint SKIP_IN = 0;  // 1: read only the input channels listed in y

void main() {
  const uint pix = gl_GlobalInvocationID.x;
  if (pix >= HO * WO) return;
  uint m[KPT];
  [[unroll]] for (uint t = 0; t < KPT; ++t) {
#ifdef DENSE
    m[t] = gl_WorkGroupID.y * KPT + t;
#else
    m[t] = u[pc.u_off + gl_WorkGroupID.y * KPT + t];
#endif
  }
#ifdef DENSE
  const uint sample_index = gl_WorkGroupID.z;
#else
  const uint sample_index = pc.s;
#endif
  if (m[0] >= M) return;  // padding of the list
  const uint oh = pix / WO, ow = pix % WO;
  const uint g = m[0] / MG;  // one group per invocation (KPT = 1 when groups > 1)
  const int h0 = int(oh * SH) - PT, w0 = int(ow * SW) - PL;
  const uint xbase = pc.x_off + (sample_index * C + g * CG) * H * W;
  uint wbase[KPT];
  float acc[KPT];
  [[unroll]] for (uint t = 0; t < KPT; ++t) {
    wbase[t] = pc.w_off + min(m[t], M - 1u) * CG * KH * KW;
    acc[t] = 0.0;
  }
  const uint list = pc.y_off + sample_index * (C + 1u);
  const uint channels = SKIP_IN != 0u ? uint(y[list]) : CG;
  for (uint ci = 0; ci < channels; ++ci) {
    const uint c = SKIP_IN != 0u ? uint(y[list + 1u + ci]) : ci;
    const uint xc = xbase + c * H * W;
    const uint wc = c * KH * KW;
    for (uint i = 0; i < KH; ++i) {
      const int ih = h0 + int(i * DH);
      if (ih < 0 || ih >= int(H)) continue;
      for (uint j = 0; j < KW; ++j) {
        const int iw = w0 + int(j * DW);
        if (iw < 0 || iw >= int(W)) continue;
        const float v = x[xc + uint(ih) * W + uint(iw)];
        [[unroll]] for (uint t = 0; t < KPT; ++t) acc[t] += v * w[wbase[t] + wc + i * KW + j];
      }
    }
  }
  [[unroll]] for (uint t = 0; t < KPT; ++t)
    if (m[t] < M) o[pc.o_off + (sample_index * M + m[t]) * HO * WO + pix] = epilogue(acc[t], m[t]);
}
