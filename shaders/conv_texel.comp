#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// A conv with one group as a GEMM, out[m][p] = sum_k W[m][k] X[k][p], whose
// operands are fetched as texels with no shared memory and no barrier. A 1x1
// conv (WKM = 0) reads them as RGBA32F texels:
// a fetch of tx is 4 consecutive pixels of one input channel, a fetch of tw 4
// consecutive input channels of one kernel ([M][C] rows, as packed for
// conv.comp). Each invocation keeps TM kernels x TQ quads of pixels in
// registers; per 4 channels it fetches TM + 4*TQ texels for 16*TM*TQ
// multiply-adds. Chosen on CPU devices (kernels/conv.cpp, docs/VULKAN.md): there
// a texel fetch is vector code while storage-buffer and shared-memory loads are
// loops over the SIMD lanes, and a barrier keeps the accumulators in memory.
// The 1x1 form needs C a multiple of 4 and the kernels at a multiple of 16
// bytes. With XSCALAR = 0 the input is read by quads (stride 1, H*W a multiple of 4, the
// input at a multiple of 16 bytes); with XSCALAR = 1 (strides, other plane
// sizes) tx is an R32F view and each pixel one fetch (its offset in the plane
// worked out once per invocation).
//
// WKM = 1 with XSCALAR = 0 (the P products of a Winograd conv, kernels/conv.cpp): z indexes
// WSETS weight sets stored k-major, [C][MP] with MP = M rounded up to 4, so a
// fetch of tw is 4 consecutive kernels of one channel (C any), and z's own
// input [C][HW] and output [M][HW] (HW the padded tile count).
//
// WKM = 1 with XSCALAR = 1: any other conv (KH x KW taps, strides, dilations,
// pads), k = (channel, tap), its kernels k-major [C*KH*KW][MP]; per k it
// fetches TM/4 kernel quads and 4*TQ input pixels (0 where a tap falls in the
// padding: the fetch reads the row's first value and the sum takes 0 instead).
//
// GATED = 1 with WKM = 1 and CHLIST = 1 (a gated consumer, direct or its
// Winograd products): the kernels (or U) k-major as ungated, each active
// kernel's weight one fetch of its own (its 4 neighbours in the texel are not
// the next active ones), over the listed channels.
// GATED = 1 (a gated conv, kernels/conv.cpp): its kernels are rows [M][KR]
// (KR = C*KH*KW rounded up to 4, zeros after), read by quads of k; work
// group row y takes the active-kernel list's slots [TM*TY*y, TM*TY*(y + 1)) at
// u[pc.u_off] (padded with M: none), one indirect dispatch per sample pc.s
// (gate_indices.comp writes the arguments). A 1x1 conv without padding and C a
// multiple of 4 takes the 1x1 loop below; any other the rows loop with taps.
// CHLIST = 1 (a gate consumer, WKM = 1: direct, or a Winograd conv's products):
// only the input channels listed at y[pc.y_off + sample*(C+1)] (count, then
// indices as floats; gate_inputs.comp) are read.
//
// Grid: x = invocations over (pixel blocks, kernel blocks) of one sample, pixel
// blocks fastest; z = sample (or weight set). GATED: x = (pixel blocks, TY list
// tiles), y = groups of TY list tiles.
#include "common.glsl"

layout(constant_id = 3) const uint C = 4;   // input channels (WKM = 0: a multiple of 4)
layout(constant_id = 4) const uint HW = 4;  // output pixels per channel (XSCALAR = 0: a multiple of 4)
layout(constant_id = 5) const uint M = 1;   // kernels
layout(constant_id = 6) const uint TM = 8;  // kernels per invocation
layout(constant_id = 7) const uint TQ = 2;  // quads of pixels per invocation
layout(constant_id = 8) const uint XSCALAR = 0;
layout(constant_id = 9) const uint H = 1;  // XSCALAR: the input plane, the output's width, the strides
layout(constant_id = 10) const uint W = 4;
layout(constant_id = 11) const uint WO = 4;
layout(constant_id = 12) const uint SH = 1;
layout(constant_id = 13) const uint SW = 1;
layout(constant_id = 14) const uint WKM = 0;
layout(constant_id = 15) const uint WSETS = 1;
layout(constant_id = 16) const uint KH = 1;  // WKM with XSCALAR: the taps, dilations and top/left pads
layout(constant_id = 17) const uint KW = 1;
layout(constant_id = 18) const uint DH = 1;
layout(constant_id = 19) const uint DW = 1;
layout(constant_id = 20) const int PT = 0;
layout(constant_id = 21) const int PL = 0;
layout(constant_id = 22) const uint GATED = 0;
layout(constant_id = 23) const uint CHLIST = 0;
// GATED: 1 = the rows loop with taps (set by the host for any conv but a 1x1
// without padding and C a multiple of 4, which takes the 1x1 loop).
layout(constant_id = 24) const uint ROWS_TAPS = 0;
// GATED: list tiles per work group row (TY x TM list slots), so that a plane
// of few pixel blocks still fills the work group.
layout(constant_id = 25) const uint TY = 1;

layout(binding = 6) uniform samplerBuffer tx;  // the input [n][C][H*W], by quads of pixels (XSCALAR: by pixel)
layout(binding = 7) uniform samplerBuffer tw;  // the kernels, [M][C] by quads of channels

// GATED with WKM: kernel j's texel in a k-major row and its place in it, and
// whether list slots 4r..4r+3 hold 4 consecutive kernels from a multiple of 4
// (every quad when all kernels are on), which are then one texel. The list is
// the same for the whole work group, so the test is too.
int kq[TM];
uint ke[TM];
bool whole[TM / 4u];

// GATED with WKM: the weights of list slots 4r..4r+3 in the k-major row at texel `at`.
vec4 active_quad(int at, uint r) {
  if (whole[r]) return texelFetch(tw, at + kq[4u * r]);
  vec4 v;
  [[unroll]] for (uint e = 0; e < 4u; ++e) v[e] = texelFetch(tw, at + kq[4u * r + e])[ke[4u * r + e]];
  return v;
}

const uint QUADS = (HW + 3u) / 4u;  // per channel
const uint PIXEL_BLOCKS = (QUADS + TQ - 1u) / TQ;
const uint KERNEL_BLOCKS = (M + TM - 1u) / TM;
const uint PLANE = XSCALAR != 0u ? H * W : HW;  // input values per channel
const uint MQ = (M + 3u) / 4u;  // WKM: texels per k-major row
const uint TAPS = KH * KW;
const uint KR4 = (C * TAPS + 3u) / 4u;  // GATED: texels per kernel row

void main() {
  const uint id = gl_GlobalInvocationID.x;
  if (id >= PIXEL_BLOCKS * (GATED != 0u ? TY : KERNEL_BLOCKS)) return;
  const uint q0 = (id % PIXEL_BLOCKS) * TQ;
  const uint m0 = ((GATED != 0u ? gl_WorkGroupID.y * TY : 0u) + id / PIXEL_BLOCKS) * TM;  // GATED: list slots
  // GATED with WSETS > 1 (a gated Winograd conv's products): z is the weight set, as ungated.
  const uint sample_index = GATED != 0u && WSETS == 1u ? pc.s : gl_WorkGroupID.z;
  // Kernel j's index (GATED: from the list; M: none, as rows past the end); rows
  // and quads past the end read the last one (no bounds test in the loop), their sums are not stored.
  uint mj[TM];
  [[unroll]] for (uint j = 0; j < TM; ++j) mj[j] = GATED != 0u ? u[pc.u_off + m0 + j] : min(m0 + j, M);
  int wrow[TM], xq[TQ], xo[4u * TQ];
  [[unroll]] for (uint j = 0; j < TM; ++j) {
    kq[j] = int(min(mj[j], M - 1u) / 4u);
    ke[j] = min(mj[j], M - 1u) % 4u;
  }
  [[unroll]] for (uint r = 0; r < TM / 4u; ++r) whole[r] = ke[4u * r] == 0u && mj[4u * r + 3u] == mj[4u * r] + 3u;
  [[unroll]] for (uint j = 0; j < TM; ++j)
    wrow[j] = int(pc.tw_off + ((sample_index % WSETS) * M + min(mj[j], M - 1u)) * (GATED != 0u ? KR4 : C / 4u));
  const int xbase = int(pc.tx_off + sample_index * C * (XSCALAR != 0u ? PLANE : QUADS));
  [[unroll]] for (uint q = 0; q < TQ; ++q) xq[q] = xbase + int(min(q0 + q, QUADS - 1u));
  [[unroll]] for (uint e = 0; e < 4u * TQ; ++e) {
    const uint p = min(4u * q0 + e, HW - 1u);
    xo[e] = xbase + int((p / WO) * SH * W + (p % WO) * SW);
  }
  vec4 acc[TM * TQ];  // [kernel j][quad q]
  [[unroll]] for (uint i = 0; i < TM * TQ; ++i) acc[i] = vec4(0.0);
  const int wkm = int(pc.tw_off + (sample_index % WSETS) * C * MQ);  // WKM: this set's [C][MQ] texels
  // CHLIST: this sample's channels (with WSETS > 1, a Winograd conv's products, the one sample bound).
  const uint list = pc.y_off + (WSETS > 1u ? 0u : sample_index) * (C + 1u);
  const uint channels = CHLIST != 0u ? uint(y[list]) : C;
  for (uint ci = 0; ci < channels && WKM != 0u && XSCALAR == 0u; ++ci) {
    const uint c = CHLIST != 0u ? uint(y[list + 1u + ci]) : ci;
    vec4 wq[TM / 4u];  // the invocation's kernels of channel c
    const int at = wkm + int(c * MQ);
    [[unroll]] for (uint r = 0; r < TM / 4u; ++r)
      wq[r] = GATED != 0u ? active_quad(at, r) : texelFetch(tw, at + int(min(m0 / 4u + r, MQ - 1u)));
    [[unroll]] for (uint q = 0; q < TQ; ++q) {
      const vec4 xv = texelFetch(tx, xq[q] + int(c * QUADS));
      [[unroll]] for (uint j = 0; j < TM; ++j) acc[j * TQ + q] += wq[j / 4u][j % 4u] * xv;
    }
  }
  // A direct conv: each pixel's window corner, then per (channel, tap) its input or 0 in the padding.
  int ih0[4u * TQ], iw0[4u * TQ];
  [[unroll]] for (uint e = 0; e < 4u * TQ; ++e) {
    const uint p = min(4u * q0 + e, HW - 1u);
    ih0[e] = int((p / WO) * SH) - PT;
    iw0[e] = int((p % WO) * SW) - PL;
  }
  for (uint ci = 0; ci < channels && WKM != 0u && XSCALAR != 0u; ++ci) {
    const uint c = CHLIST != 0u ? uint(y[list + 1u + ci]) : ci;
    const int row = xbase + int(c * PLANE);
    for (uint tap = 0; tap < TAPS; ++tap) {
      const int dh = int((tap / KW) * DH), dw = int((tap % KW) * DW);
      vec4 wq[TM / 4u];
      const int at = wkm + int((c * TAPS + tap) * MQ);
      [[unroll]] for (uint r = 0; r < TM / 4u; ++r)
        wq[r] = GATED != 0u ? active_quad(at, r) : texelFetch(tw, at + int(min(m0 / 4u + r, MQ - 1u)));
      [[unroll]] for (uint q = 0; q < TQ; ++q) {
        vec4 xv;
        [[unroll]] for (uint i = 0; i < 4u; ++i) {
          const int ih = ih0[4u * q + i] + dh, iw = iw0[4u * q + i] + dw;
          const bool inside = ih >= 0 && ih < int(H) && iw >= 0 && iw < int(W);
          const float v = texelFetch(tx, inside ? row + ih * int(W) + iw : row).x;
          xv[i] = inside ? v : 0.0;
        }
        [[unroll]] for (uint j = 0; j < TM; ++j) acc[j * TQ + q] += wq[j / 4u][j % 4u] * xv;
      }
    }
  }
  // GATED rows with taps: per 4 k = (channel, tap), one texel per kernel, then each k's input.
  for (uint k4 = 0; k4 < KR4 && ROWS_TAPS != 0u; ++k4) {
    vec4 wv[TM];
    [[unroll]] for (uint j = 0; j < TM; ++j) wv[j] = texelFetch(tw, wrow[j] + int(k4));
    [[unroll]] for (uint e = 0; e < 4u; ++e) {
      const bool real = 4u * k4 + e < C * TAPS;  // past the end: input 0 (the weights are 0 too)
      const uint k = min(4u * k4 + e, C * TAPS - 1u);
      const uint c = k / TAPS, tap = k % TAPS;
      const int row = xbase + int(c * PLANE);
      const int dh = int((tap / KW) * DH), dw = int((tap % KW) * DW);
      [[unroll]] for (uint q = 0; q < TQ; ++q) {
        vec4 xv;
        [[unroll]] for (uint i = 0; i < 4u; ++i) {
          const int ih = ih0[4u * q + i] + dh, iw = iw0[4u * q + i] + dw;
          const bool inside = real && ih >= 0 && ih < int(H) && iw >= 0 && iw < int(W);
          const float v = texelFetch(tx, inside ? row + ih * int(W) + iw : row).x;
          xv[i] = inside ? v : 0.0;
        }
        [[unroll]] for (uint j = 0; j < TM; ++j) acc[j * TQ + q] += wv[j][e] * xv;
      }
    }
  }
  for (uint c4 = 0; c4 < C / 4u && WKM == 0u && ROWS_TAPS == 0u; ++c4) {
    vec4 wv[TM];
    [[unroll]] for (uint j = 0; j < TM; ++j) wv[j] = texelFetch(tw, wrow[j] + int(c4));
    [[unroll]] for (uint e = 0; e < 4u; ++e) {
      const int row = int((4u * c4 + e) * (XSCALAR != 0u ? PLANE : QUADS));
      [[unroll]] for (uint q = 0; q < TQ; ++q) {
        vec4 xv;
        if (XSCALAR != 0u) {  // the quad's pixels at offsets xo[4q .. 4q + 3]
          [[unroll]] for (uint i = 0; i < 4u; ++i) xv[i] = texelFetch(tx, row + xo[4u * q + i]).x;
        } else {
          xv = texelFetch(tx, xq[q] + row);
        }
        [[unroll]] for (uint j = 0; j < TM; ++j) acc[j * TQ + q] += wv[j][e] * xv;
      }
    }
  }
  const uint obase = pc.o_off + sample_index * M * HW;
  [[unroll]] for (uint j = 0; j < TM; ++j) {
    const uint m = mj[j];
    if (m >= M) break;  // GATED: the list's padding is at its end too
    [[unroll]] for (uint q = 0; q < TQ; ++q) {
      if (q0 + q >= QUADS) break;
      const vec4 v = epilogue4(acc[j * TQ + q], m);
      const uint p = 4u * (q0 + q), ob = obase + m * HW + p;
      if (p + 3u < HW) {
        o[ob] = v.x;
        o[ob + 1u] = v.y;
        o[ob + 2u] = v.z;
        o[ob + 3u] = v.w;
      } else {
        [[unroll]] for (uint e = 0; e < 4u; ++e)
          if (p + e < HW) o[ob + e] = v[e];
      }
    }
  }
}
