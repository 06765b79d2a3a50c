#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// Convolution with one group (1-D and 2-D; strides, dilations, asymmetric
// pads; 1x1 convs are the same shader with the tap arithmetic specialised
// away) as a tiled implicit GEMM: out[m][p] = sum_k W[m][k] * X[k][p] with
// k = (input channel, tap) and p = output pixel, X gathered from the input on
// the fly (no im2col buffer). A work group of NX x NY invocations computes a
// tile of BM = 4*TMQ*NY output kernels x BN = 4*TPQ*NX output pixels; each
// invocation keeps 4*TMQ kernels x TPQ quads of 4 consecutive pixels in
// registers (vec4 accumulators). The reduction runs in steps of BK: the group
// stages BK x BN input values and BK x BM weights in shared memory, then each
// invocation does 16*TMQ*TPQ FMAs per TMQ + TPQ vec4 reads from shared memory
// (quads of neighbouring invocations are adjacent, so a wave reads contiguous
// shared memory). Tile sizes and BK are specialisation constants chosen per
// layer within the device's limits (kernels/conv.cpp).
//
// GATED (default build, conv_gated.spv): gating-ready. Work-group row y covers
// slots [BM*y, BM*y + BM) of this sample's list of active output kernels
// u[u_off + slot]; lists are padded with M (no kernel) to a multiple of BM.
// The host launches one vkCmdDispatchIndirect per sample whose y count is the
// padded list length / BM, written on the device (all M kernels when the layer
// is ungated), so the count is never read back.
// DENSE (conv_dense.spv): plain dispatch, y = kernel tiles, z = sample.
// SKIP_IN (a gate's consumer): per sample, y holds at sample*(C+1) the count
// of input channels that are not all zero, then their indices (as floats,
// gate_inputs.comp); only those are read.
// SPLIT (pc.p0 = KS > 1, ungated layers whose grid is small against the
// device, kernels/conv.cpp): the reduction is cut into KS slices of whole BK
// steps, one per work group along z (DENSE: z = sample * KS + slice); each
// writes its raw partial sums, no epilogue, to o at [sample][slice][m][p], and
// splitk.comp adds the slices and applies the epilogue.
#include "common.glsl"

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
layout(constant_id = 17) const uint NX = 8;  // = local_size_x: pixel quads per tile
layout(constant_id = 18) const uint NY = 8;  // = local_size_y: kernel quads per tile
layout(constant_id = 19) const uint BK = 8;  // reduction depth staged per step
layout(constant_id = 20) const uint SKIP_IN = 0;  // 1: read only the input channels listed in y
layout(constant_id = 21) const uint TPQ = 1;  // pixel quads per invocation
layout(constant_id = 22) const uint TMQ = 1;  // kernel quads per invocation
// > 0 (DENSE only, the GEMMs of a Winograd conv, winograd.comp): z indexes WSETS
// weight sets of M x C x TAPS, one per "sample" z.
layout(constant_id = 23) const uint WSETS = 0;
// WKM = 1 (DENSE only, with WSETS: a Winograd conv's transformed kernels): each
// weight set is stored k-major, [C*TAPS][MP] with MP = M rounded up to 4 (zeros
// after M), so the 4 consecutive kernels of a tile's quad are one vec4 load.
layout(constant_id = 24) const uint WKM = 0;
// WF16 = 1 (option "weight_storage": "fp16"): the kernels are IEEE halves, two
// per word in packHalf2x16's order, at half indices from 2 * pc.w_off; rows of
// [M][C*TAPS] are padded to an even length, so that an aligned pair of k is
// one word (half the loads of the staging), and a WKM quad is one uvec2. The
// epilogue's tables after them stay float32 (word offsets, as always).
layout(constant_id = 25) const uint WF16 = 0;
layout(std430, binding = 4) readonly buffer BW4 { vec4 w4[]; };     // the weights binding, by vec4 (WKM)
layout(std430, binding = 4) readonly buffer BWH { uint wh[]; };     // ... by pairs of halves (WF16)
layout(std430, binding = 4) readonly buffer BWH4 { uvec2 wh4[]; };  // ... by quads of halves (WF16, WKM)
const uint MP = (M + 3u) / 4u * 4u;
const uint KROW = WF16 != 0u ? (C * KH * KW + 1u) / 2u * 2u : C * KH * KW;  // elements per kernel row
// Staging by pairs of k (WF16 rows; a gate consumer's SKIP_IN reorders k, so it reads halves one by one).
const bool PAIRS = WF16 != 0u && WKM == 0u && SKIP_IN == 0u;

float half_at(uint e) { return unpackHalf2x16(wh[e / 2u])[e % 2u]; }
vec4 halves4_at(uint e) {  // e a multiple of 4
  const uvec2 h = wh4[e / 4u];
  return vec4(unpackHalf2x16(h.x), unpackHalf2x16(h.y));
}

const uint TAPS = KH * KW;
const uint HWO = HO * WO;
const uint BN = 4u * TPQ * NX;
const uint BM = 4u * TMQ * NY;
const uint NT = NX * NY;
const uint XQ = BN / 4u;  // pixel quads per tile
const uint WQ = BM / 4u;  // kernel quads per tile

shared vec4 xs[BK * XQ];   // [k][pixel quad]
shared vec4 ws[BK * WQ];   // [k][kernel quad]
shared uvec4 mq[WQ];       // the tile's kernels by quad (M: none)

void main() {
  const uint lx = gl_LocalInvocationID.x, ly = gl_LocalInvocationID.y;
  const uint t = ly * NX + lx;
  const uint p0 = gl_WorkGroupID.x * BN;
  const uint ks = max(pc.p0, 1u);  // reduction slices
#ifdef DENSE
  const uint sample_index = gl_WorkGroupID.z / ks, slice = gl_WorkGroupID.z % ks;
#else
  const uint sample_index = pc.s, slice = gl_WorkGroupID.z;
#endif
  for (uint i = t; i < BM; i += NT) {
    const uint slot = gl_WorkGroupID.y * BM + i;
#ifdef DENSE
    mq[i / 4u][i % 4u] = slot < M ? slot : M;
#else
    mq[i / 4u][i % 4u] = u[pc.u_off + slot];
#endif
  }
  const uint xbase = pc.x_off + sample_index * C * H * W;
  // Weights in elements (floats, or halves with WF16) from the window's start.
  const uint wbase = pc.w_off * (WF16 != 0u ? 2u : 1u) +
                     (WSETS > 0u ? (sample_index % WSETS) * (WKM != 0u ? MP * C * TAPS : M * KROW) : 0u);
  const uint mtile = gl_WorkGroupID.y * BM;  // DENSE: the tile's kernels are mtile, mtile + 1, ...
  const uint list = pc.y_off + sample_index * (C + 1u);
  const uint channels = SKIP_IN != 0u ? uint(y[list]) : C;
  const uint ktot = channels * TAPS;
  const uint kchunk = ((ktot + ks - 1u) / ks + BK - 1u) / BK * BK;  // whole steps per slice
  const uint kbeg = slice * kchunk, kend = min(ktot, kbeg + kchunk);
  vec4 acc[4u * TMQ * TPQ];  // [kernel j][pixel quad q]: 4 pixels of kernel j
  [[unroll]] for (uint i = 0; i < 4u * TMQ * TPQ; ++i) acc[i] = vec4(0.0);
  barrier();
  for (uint k0 = kbeg; k0 < kend; k0 += BK) {
    // Stage BK x BN input values by quads of 4 pixels (consecutive invocations:
    // consecutive quads), one vec4 store each; the channel and tap of k once per quad.
    for (uint i = t; i < BK * XQ; i += NT) {
      const uint kk = i / XQ, pq = i % XQ;
      const uint k = k0 + kk;
      vec4 v = vec4(0.0);
      if (k < kend) {
        const uint ci = k / TAPS, tap = k % TAPS;
        const uint c = SKIP_IN != 0u ? uint(y[list + 1u + ci]) : ci;
        const uint cb = xbase + c * H * W;
        const int dh = int((tap / KW) * DH) - PT, dw = int((tap % KW) * DW) - PL;
        [[unroll]] for (uint e = 0; e < 4u; ++e) {
          const uint p = p0 + 4u * pq + e;
          const int ih = int((p / WO) * SH) + dh, iw = int((p % WO) * SW) + dw;
          if (p < HWO && ih >= 0 && ih < int(H) && iw >= 0 && iw < int(W)) v[e] = x[cb + uint(ih) * W + uint(iw)];
        }
      }
      xs[kk * XQ + pq] = v;
    }
    // Stage BK x BM weights ([M][C*TAPS] rows, or k-major rows with WKM) by
    // quads of 4 kernels, one vec4 store each (consecutive invocations:
    // consecutive k of the same kernels, or with WKM consecutive quads of one k).
    for (uint i = t; i < BK * WQ && WKM != 0u; i += NT) {
      const uint kk = i / WQ, q = i % WQ;
      const uint k = k0 + kk, m0 = mtile + 4u * q;
      const uint e = wbase + k * MP + m0;
      ws[kk * WQ + q] = k < kend && m0 < M ? (WF16 != 0u ? halves4_at(e) : w4[e / 4u]) : vec4(0.0);
    }
    // With PAIRS, one word per kernel holds k and k + 1 (k0 and rows are even).
    for (uint i = t; i < BK / 2u * WQ && PAIRS; i += NT) {
      const uint kp = i % (BK / 2u), q = i / (BK / 2u);
      const uint k = k0 + 2u * kp;
      const uvec4 m = mq[q];
      vec4 lo = vec4(0.0), hi = vec4(0.0);
      if (k < kend) {
        [[unroll]] for (uint e = 0; e < 4u; ++e)
          if (m[e] < M) {
            const vec2 v = unpackHalf2x16(wh[(wbase + m[e] * KROW + k) / 2u]);
            lo[e] = v.x;
            hi[e] = v.y;
          }
        if (k + 1u >= kend) hi = vec4(0.0);
      }
      ws[2u * kp * WQ + q] = lo;
      ws[(2u * kp + 1u) * WQ + q] = hi;
    }
    for (uint i = t; i < BK * WQ && WKM == 0u && !PAIRS; i += NT) {
      const uint kk = i % BK, q = i / BK;
      const uint k = k0 + kk;
      const uvec4 m = mq[q];
      vec4 v = vec4(0.0);
      if (k < kend) {
        const uint wk = SKIP_IN != 0u ? uint(y[list + 1u + k / TAPS]) * TAPS + k % TAPS : k;
        [[unroll]] for (uint e = 0; e < 4u; ++e)
          if (m[e] < M) v[e] = WF16 != 0u ? half_at(wbase + m[e] * KROW + wk) : w[wbase + m[e] * KROW + wk];
      }
      ws[kk * WQ + q] = v;
    }
    barrier();
    for (uint kk = 0; kk < BK; ++kk) {
      vec4 a[TPQ], b[TMQ];
      [[unroll]] for (uint q = 0; q < TPQ; ++q) a[q] = xs[kk * XQ + q * NX + lx];
      [[unroll]] for (uint r = 0; r < TMQ; ++r) b[r] = ws[kk * WQ + r * NY + ly];
      [[unroll]] for (uint j = 0; j < 4u * TMQ; ++j)
        [[unroll]] for (uint q = 0; q < TPQ; ++q) acc[j * TPQ + q] += a[q] * b[j / 4u][j % 4u];
    }
    barrier();
  }
  const uint obase = pc.o_off + (sample_index * ks + slice) * M * HWO;
  // The epilogue per quad (a kernel's parameters read once for its 4 pixels,
  // outside the bounds tests), then the quad's stores.
  [[unroll]] for (uint j = 0; j < 4u * TMQ; ++j) {
    const uint m = mq[(j / 4u) * NY + ly][j % 4u];
    const uint mc = min(m, M - 1u);
    [[unroll]] for (uint q = 0; q < TPQ; ++q) {
      const uint p = p0 + 4u * (q * NX + lx);
      const vec4 v = ks > 1u ? acc[j * TPQ + q] : epilogue4(acc[j * TPQ + q], mc);
      if (m >= M) continue;
      const uint ob = obase + m * HWO + p;
      if (p + 3u < HWO) {
        o[ob] = v.x;
        o[ob + 1u] = v.y;
        o[ob + 2u] = v.z;
        o[ob + 3u] = v.w;
      } else {
        [[unroll]] for (uint e = 0; e < 4u; ++e)
          if (p + e < HWO) o[ob + e] = v[e];
      }
    }
  }
}
