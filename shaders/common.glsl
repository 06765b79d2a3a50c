// Shared by every frugal compute shader: the one descriptor-set layout and push
// constant block that all pipelines use, the flat-index helper, and the
// per-channel epilogue.
//
// Bindings are windows into device buffers chosen per dispatch by the host (six
// storage buffers here; kernels that fetch operands as RGBA32F texels declare
// bindings 6 and 7 themselves, as uniform samplerBuffers): the
// activation arena (one buffer of exactly the budget), the weights buffer, or a
// dummy. A window starts at an offset aligned to the device's
// minStorageBufferOffsetAlignment; the element offset of the operand inside its
// window comes in the push constants (x_off, ...).

layout(local_size_x_id = 0, local_size_y_id = 1, local_size_z_id = 2) in;

layout(std430, binding = 0) readonly buffer BX { float x[]; };   // input 0
layout(std430, binding = 1) readonly buffer BY { float y[]; };   // input 1
layout(std430, binding = 2) readonly buffer BZ { float z[]; };   // input 2
layout(std430, binding = 3) buffer BO { float o[]; };            // output
layout(std430, binding = 4) readonly buffer BW { float w[]; };   // the layer's parameters
layout(std430, binding = 5) buffer BU { uint u[]; };             // indices, counts, dispatch arguments

layout(push_constant) uniform PC {
  uint x_off, y_off, z_off, o_off, w_off, u_off;  // element offsets inside each window
  uint n;                                          // samples (or rows) this dispatch covers
  uint s;                                          // sample index, for per-sample dispatches
  uint p0, p1, p2, p3;                             // op-specific
  uint tx_off, tw_off;                             // texel offsets inside the texel views (tx, tw)
} pc;

// Dispatches wider than maxComputeWorkGroupCount[0] are folded into y rows; this
// is the linear index of the invocation along x across those rows.
uint flat_index() {
  return (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
}

// ---- epilogue: up to 4 steps applied per output channel --------------------
// Step kinds: 0 none, 1 affine (scale at w[EP_Ok + c], shift at w[EP_Ok + EP_C + c]);
// activations keep their frugal::ops::ActivationKind value (frugal/model/ops/activation.h)
// with parameters a, b (EP_LOk, EP_HIk): 2 relu, 3 clip [a, b], 4 sigmoid,
// 5 hard sigmoid max(0, min(1, a v + b)), 6 hard swish, 7 leaky relu (slope a).
layout(constant_id = 40) const uint EP_C = 1;
layout(constant_id = 41) const uint EP_K0 = 0;
layout(constant_id = 42) const uint EP_K1 = 0;
layout(constant_id = 43) const uint EP_K2 = 0;
layout(constant_id = 44) const uint EP_K3 = 0;
layout(constant_id = 45) const uint EP_O0 = 0;
layout(constant_id = 46) const uint EP_O1 = 0;
layout(constant_id = 47) const uint EP_O2 = 0;
layout(constant_id = 48) const uint EP_O3 = 0;
layout(constant_id = 49) const float EP_LO0 = 0.0;
layout(constant_id = 50) const float EP_LO1 = 0.0;
layout(constant_id = 51) const float EP_LO2 = 0.0;
layout(constant_id = 52) const float EP_LO3 = 0.0;
layout(constant_id = 53) const float EP_HI0 = 0.0;
layout(constant_id = 54) const float EP_HI1 = 0.0;
layout(constant_id = 55) const float EP_HI2 = 0.0;
layout(constant_id = 56) const float EP_HI3 = 0.0;

float epilogue_step(uint kind, uint off, float a, float b, float v, uint c) {
  if (kind == 1u) return w[pc.w_off + off + c] * v + w[pc.w_off + off + EP_C + c];
  if (kind == 2u) return v > 0.0 ? v : 0.0;  // NaN -> 0, as the cpu executor
  if (kind == 3u) {
    v = v < a ? a : v;
    return b < v ? b : v;
  }
  if (kind == 4u) return 1.0 / (1.0 + exp(-v));
  if (kind == 5u) return clamp(a * v + b, 0.0, 1.0);
  if (kind == 6u) return v * clamp(v / 6.0 + 0.5, 0.0, 1.0);
  if (kind == 7u) return v >= 0.0 ? v : a * v;
  return v;
}

float epilogue(float v, uint c) {
  v = epilogue_step(EP_K0, EP_O0, EP_LO0, EP_HI0, v, c);
  v = epilogue_step(EP_K1, EP_O1, EP_LO1, EP_HI1, v, c);
  v = epilogue_step(EP_K2, EP_O2, EP_LO2, EP_HI2, v, c);
  v = epilogue_step(EP_K3, EP_O3, EP_LO3, EP_HI3, v, c);
  return v;
}

// The same epilogue on 4 values of one channel c: its parameters are read once
// for the 4 (kernels that keep several outputs of a channel in registers call
// it per quad, not per value). Component-wise the same arithmetic as epilogue().
vec4 epilogue_step4(uint kind, uint off, float a, float b, vec4 v, uint c) {
  if (kind == 1u) return w[pc.w_off + off + c] * v + w[pc.w_off + off + EP_C + c];
  if (kind == 2u) return mix(vec4(0.0), v, greaterThan(v, vec4(0.0)));  // NaN -> 0
  if (kind == 3u) {
    v = mix(v, vec4(a), lessThan(v, vec4(a)));
    return mix(v, vec4(b), lessThan(vec4(b), v));
  }
  if (kind == 4u) return 1.0 / (1.0 + exp(-v));
  if (kind == 5u) return clamp(a * v + b, 0.0, 1.0);
  if (kind == 6u) return v * clamp(v / 6.0 + 0.5, 0.0, 1.0);
  if (kind == 7u) return mix(a * v, v, greaterThanEqual(v, vec4(0.0)));
  return v;
}

vec4 epilogue4(vec4 v, uint c) {
  v = epilogue_step4(EP_K0, EP_O0, EP_LO0, EP_HI0, v, c);
  v = epilogue_step4(EP_K1, EP_O1, EP_LO1, EP_HI1, v, c);
  v = epilogue_step4(EP_K2, EP_O2, EP_LO2, EP_HI2, v, c);
  v = epilogue_step4(EP_K3, EP_O3, EP_LO3, EP_HI3, v, c);
  return v;
}
