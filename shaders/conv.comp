#version 450
#extension GL_GOOGLE_include_directive : require
// Direct convolution (1-D and 2-D; groups, depthwise, strides, dilations,
// asymmetric pads) with the layer's per-channel epilogue (bias, BatchNorm,
// Relu/Clip/Sigmoid). One invocation computes one output value.
//
// GATED (default build, conv_gated.spv): gating-ready. Work-group row y is a slot
// in this sample's list of active output kernels u[u_off + slot]; the host
// launches one vkCmdDispatchIndirect per sample whose y count is the number of
// active kernels, written on the device (all M kernels when the layer is
// ungated), so the count is never read back.
// DENSE (conv_dense.spv): plain dispatch, y = output kernel, z = sample; kept so
// a benchmark can measure what the indirection costs.
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

void main() {
  const uint pix = gl_GlobalInvocationID.x;
  if (pix >= HO * WO) return;
#ifdef DENSE
  const uint m = gl_WorkGroupID.y;
  const uint sample_index = gl_WorkGroupID.z;
#else
  const uint m = u[pc.u_off + gl_WorkGroupID.y];
  const uint sample_index = pc.s;
#endif
  const uint oh = pix / WO, ow = pix % WO;
  const uint g = m / MG;
  const int h0 = int(oh * SH) - PT, w0 = int(ow * SW) - PL;
  const uint xbase = pc.x_off + (sample_index * C + g * CG) * H * W;
  const uint wbase = pc.w_off + m * CG * KH * KW;
  float acc = 0.0;
  for (uint c = 0; c < CG; ++c) {
    const uint xc = xbase + c * H * W;
    const uint wc = wbase + c * KH * KW;
    for (uint i = 0; i < KH; ++i) {
      const int ih = h0 + int(i * DH);
      if (ih < 0 || ih >= int(H)) continue;
      for (uint j = 0; j < KW; ++j) {
        const int iw = w0 + int(j * DW);
        if (iw < 0 || iw >= int(W)) continue;
        acc += x[xc + uint(ih) * W + uint(iw)] * w[wc + i * KW + j];
      }
    }
  }
  o[pc.o_off + (sample_index * M + m) * HO * WO + pix] = epilogue(acc, m);
}
