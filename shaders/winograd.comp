#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// The transforms of a Winograd convolution F(R x R, 3 x 3) (3x3 kernels,
// stride 1, dilation 1, one group; kernels/conv.cpp). A tile of R x R output
// pixels needs N x N = (R + 2) x (R + 2) input pixels; in the Winograd domain
// the conv is P = N * N independent products U[p] (M x C, the kernels
// transformed once at load, G g G^T) times V[p] (C x T, the input transformed
// here, B^T d B), T = TH * TW tiles per sample. conv.comp runs those P GEMMs
// as one dispatch (a 1x1 conv over T "pixels", one weight set per p); the
// output transform A^T m A then gives R x R outputs per tile and applies the
// layer's epilogue.
//
// F43 defined: F(4x4, 3x3), N = 6 (Lavin and Gray's points 0, +-1, +-2): a
// quarter of the direct conv's multiplications in the GEMMs. Else F(2x2, 3x3),
// N = 4: 4/9 of them, with smaller transforms and workspace.
//
// INPUT: one invocation per (sample, channel c, tile t): reads the tile's
// N x N input window (zeros outside the input: the conv's padding) and writes
// V[s][p][c][t] for each p. Otherwise (output): one invocation per (sample,
// kernel m, tile t): reads Y[s][p][m][t] for each p (the sum of pc.p0 slices
// Y[s][p][slice][m][t] when the products' reduction was split), writes the tile's output
// pixels that lie inside the output, each through the epilogue. pc.p1 = 1 (a
// gated conv, whose products ran only for its switched-on kernels): the
// switches, 1.0 or 0.0 per kernel, at y[pc.y_off + sample * C + m]; a
// switched-off kernel's outputs are 0.
#include "common.glsl"

layout(constant_id = 3) const uint C = 1;   // INPUT: input channels; else kernels (M)
layout(constant_id = 4) const uint H = 1;   // INPUT: input rows; else output rows
layout(constant_id = 5) const uint W = 1;   // INPUT: input columns; else output columns
layout(constant_id = 6) const uint TH = 1;  // tile rows
layout(constant_id = 7) const uint TW = 1;  // tile columns
// V's and Y's rows hold TS >= T tiles (0: T); the GEMMs on texels want a
// multiple of 4 (kernels/conv.cpp); the padding is neither written nor read here.
layout(constant_id = 8) const uint TS = 0;
layout(constant_id = 15) const int PT = 0;  // INPUT: top and left pads
layout(constant_id = 16) const int PL = 0;

#ifdef F43
const uint R = 4u;
const uint N = 6u;
// B^T, N x N
const float BT[36] = float[](4.0, 0.0, -5.0, 0.0, 1.0, 0.0,   //
                             0.0, -4.0, -4.0, 1.0, 1.0, 0.0,  //
                             0.0, 4.0, -4.0, -1.0, 1.0, 0.0,  //
                             0.0, -2.0, -1.0, 2.0, 1.0, 0.0,  //
                             0.0, 2.0, -1.0, -2.0, 1.0, 0.0,  //
                             0.0, 4.0, 0.0, -5.0, 0.0, 1.0);
// A^T, R x N
const float AT[24] = float[](1.0, 1.0, 1.0, 1.0, 1.0, 0.0,    //
                             0.0, 1.0, -1.0, 2.0, -2.0, 0.0,  //
                             0.0, 1.0, 1.0, 4.0, 4.0, 0.0,    //
                             0.0, 1.0, -1.0, 8.0, -8.0, 1.0);
#else
const uint R = 2u;
const uint N = 4u;
const float BT[16] = float[](1.0, 0.0, -1.0, 0.0,  //
                             0.0, 1.0, 1.0, 0.0,   //
                             0.0, -1.0, 1.0, 0.0,  //
                             0.0, 1.0, 0.0, -1.0);
const float AT[8] = float[](1.0, 1.0, 1.0, 0.0,  //
                            0.0, 1.0, -1.0, -1.0);
#endif
const uint P = N * N;
const uint T = TH * TW;
const uint ROW = TS > 0u ? TS : T;  // tiles per row of V and Y

void main() {
  const uint i = flat_index();
  if (i >= pc.n * C * T) return;
  const uint t = i % T, sc = i / T;  // sc = sample * C + channel (or kernel)
  const uint c = sc % C, s = sc / C;
  const uint th = t / TW, tw = t % TW;
#ifdef INPUT
  float d[N * N];
  const int ih0 = int(th * R) - PT, iw0 = int(tw * R) - PL;
  const uint xb = pc.x_off + sc * H * W;
  [[unroll]] for (uint a = 0; a < N; ++a)
    [[unroll]] for (uint b = 0; b < N; ++b) {
      const int ih = ih0 + int(a), iw = iw0 + int(b);
      float v = 0.0;
      if (ih >= 0 && ih < int(H) && iw >= 0 && iw < int(W)) v = x[xb + uint(ih) * W + uint(iw)];
      d[a * N + b] = v;
    }
  float e[N * N];  // B^T d
  [[unroll]] for (uint a = 0; a < N; ++a)
    [[unroll]] for (uint b = 0; b < N; ++b) {
      float v = 0.0;
      [[unroll]] for (uint k = 0; k < N; ++k) v += BT[a * N + k] * d[k * N + b];
      e[a * N + b] = v;
    }
  const uint ob = pc.o_off + (s * P * C + c) * ROW + t;
  [[unroll]] for (uint a = 0; a < N; ++a)
    [[unroll]] for (uint b = 0; b < N; ++b) {
      float v = 0.0;
      [[unroll]] for (uint k = 0; k < N; ++k) v += e[a * N + k] * BT[b * N + k];
      o[ob + (a * N + b) * C * ROW] = v;  // V[s][p][c][t]
    }
#else
  const bool off = pc.p1 == 1u && !(y[pc.y_off + sc] > 0.5);
  float yp[N * N];
  const uint ks = max(pc.p0, 1u);  // the products' reduction slices (split-K), summed here
  const uint yb = pc.x_off + (s * P * ks * C + c) * ROW + t;
  [[unroll]] for (uint p = 0; p < P; ++p) {
    float v = 0.0;
    for (uint j = 0; j < ks && !off; ++j) v += x[yb + (p * ks + j) * C * ROW];  // Y[s][p][slice][m][t]
    yp[p] = v;
  }
  float e[R * N];                                          // A^T y
  [[unroll]] for (uint a = 0; a < R; ++a)
    [[unroll]] for (uint b = 0; b < N; ++b) {
      float v = 0.0;
      [[unroll]] for (uint k = 0; k < N; ++k) v += AT[a * N + k] * yp[k * N + b];
      e[a * N + b] = v;
    }
  const uint ob = pc.o_off + sc * H * W;
  [[unroll]] for (uint a = 0; a < R; ++a) {
    const uint oh = th * R + a;
    if (oh >= H) break;
    [[unroll]] for (uint b = 0; b < R; ++b) {
      const uint ow = tw * R + b;
      if (ow >= W) break;
      float v = 0.0;
      [[unroll]] for (uint k = 0; k < N; ++k) v += e[a * N + k] * AT[b * N + k];
      o[ob + oh * W + ow] = off ? 0.0 : epilogue(v, c);
    }
  }
#endif
}
