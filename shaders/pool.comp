#version 450
#extension GL_GOOGLE_include_directive : require
// MaxPool (MAX_POOL, pool_max.spv) and AveragePool (pool_avg.spv), 1-D and 2-D,
// with pads, strides, dilations and ceil_mode (the host computes HO/WO), and
// count_include_pad both ways. GlobalAveragePool/GlobalMaxPool run here too, as
// one window over the whole (flattened) plane. One invocation per output value;
// the output has pc.n * C planes.
#include "common.glsl"

layout(constant_id = 3) const uint C = 1;
layout(constant_id = 4) const uint H = 1;
layout(constant_id = 5) const uint W = 1;
layout(constant_id = 6) const uint HO = 1;
layout(constant_id = 7) const uint WO = 1;
layout(constant_id = 8) const uint KH = 1;
layout(constant_id = 9) const uint KW = 1;
layout(constant_id = 10) const uint SH = 1;
layout(constant_id = 11) const uint SW = 1;
layout(constant_id = 12) const uint DH = 1;
layout(constant_id = 13) const uint DW = 1;
layout(constant_id = 14) const int PT = 0;
layout(constant_id = 15) const int PL = 0;
layout(constant_id = 16) const int PB = 0;
layout(constant_id = 17) const int PR = 0;
layout(constant_id = 18) const uint COUNT_INCLUDE_PAD = 0;

void main() {
  const uint idx = flat_index();
  if (idx >= pc.n * C * HO * WO) return;
  const uint plane = idx / (HO * WO), pix = idx % (HO * WO);
  const uint oh = pix / WO, ow = pix % WO;
  const int h0 = int(oh * SH) - PT, w0 = int(ow * SW) - PL;
  const uint xbase = pc.x_off + plane * H * W;
#ifdef MAX_POOL
  float best = uintBitsToFloat(0xff800000u);  // -inf
#else
  float sum = 0.0;
  uint inside = 0u, in_padded = 0u;
#endif
  for (uint i = 0; i < KH; ++i) {
    const int ih = h0 + int(i * DH);
    const bool row_in = ih >= 0 && ih < int(H);
#ifndef MAX_POOL
    const bool row_padded = ih < int(H) + PB;
#endif
    for (uint j = 0; j < KW; ++j) {
      const int iw = w0 + int(j * DW);
#ifndef MAX_POOL
      if (row_padded && iw < int(W) + PR) ++in_padded;
#endif
      if (!row_in || iw < 0 || iw >= int(W)) continue;
      const float v = x[xbase + uint(ih) * W + uint(iw)];
#ifdef MAX_POOL
      best = v > best ? v : best;  // NaN inputs are skipped, as the cpu executor
#else
      sum += v;
      ++inside;
#endif
    }
  }
#ifdef MAX_POOL
  o[pc.o_off + idx] = best;
#else
  const uint div = COUNT_INCLUDE_PAD != 0u ? in_padded : inside;
  o[pc.o_off + idx] = div > 0u ? sum / float(div) : 0.0;
#endif
}
