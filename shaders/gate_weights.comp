#version 450
#extension GL_GOOGLE_include_directive : require
// A gated consumer on texel operands (conv_texel.comp, GATED with WKM): one
// sample's weights for its active (kernel, input channel) pairs, gathered
// k-major into o: row ci*TAPS + tap holds, at slot j of the active-kernel list
// u[pc.u_off + j] (LIST slots, padded with M), the weight of that kernel at
// the listed input channel ci (y[pc.y_off]: count, then indices as floats;
// gate_inputs.comp) and tap; 0 for padding slots. The kernels are rows
// [M][C*TAPS] at w[pc.w_off]. Rows past the count are not written. One
// invocation per (set, row, slot) of SETS x C*TAPS x LIST.
// MP > 0 (a gated consumer's Winograd products): SETS = P sets of the
// transformed kernels, each k-major [C][MP] (TAPS = 1), gathered set by set.
#include "common.glsl"

layout(constant_id = 3) const uint C = 1;
layout(constant_id = 4) const uint TAPS = 1;
layout(constant_id = 5) const uint M = 1;
layout(constant_id = 6) const uint LIST = 1;
layout(constant_id = 7) const uint SETS = 1;
layout(constant_id = 8) const uint MP = 0;

void main() {
  const uint i = flat_index();
  if (i >= SETS * C * TAPS * LIST) return;
  const uint slot = i % LIST, row = (i / LIST) % (C * TAPS), set = i / (LIST * C * TAPS);
  const uint ci = row / TAPS, tap = row % TAPS;
  if (ci >= uint(y[pc.y_off])) return;
  const uint c = uint(y[pc.y_off + 1u + ci]), m = u[pc.u_off + slot];
  const uint at = MP > 0u ? (set * C + c) * MP + m : m * C * TAPS + c * TAPS + tap;
  o[pc.o_off + i] = m < M ? w[pc.w_off + at] : 0.0;
}
