#include "common/gate_params.h"

#include <cmath>
#include <cstring>

#include "frugal/error.h"

namespace frugal::exec {

GateParams GateParams::from(const Graph& g, const GateMatch& m, std::optional<float> threshold) {
  const int i = g.node_index(m.gate_conv);
  if (i < 0) throw Error("gate conv '" + m.gate_conv + "' not found");
  const Node& conv = g.nodes[size_t(i)];
  GateParams p;
  p.kernels = m.channels;
  p.channels = m.input_channels;
  p.weights = g.tensor(conv.inputs[1]).as_float();
  if (int64_t(p.weights.size()) != p.kernels * p.channels)
    throw Error("gate conv '" + m.gate_conv + "': weights hold " + std::to_string(p.weights.size()) +
                " values, not " + std::to_string(p.kernels) + " x " + std::to_string(p.channels));
  p.bias.assign(size_t(p.kernels), 0.0f);
  if (conv.inputs.size() > 2 && !conv.inputs[2].empty()) {
    p.bias = g.tensor(conv.inputs[2]).as_float();
    if (int64_t(p.bias.size()) != p.kernels)
      throw Error("gate conv '" + m.gate_conv + "': bias holds " + std::to_string(p.bias.size()) +
                  " values, not " + std::to_string(p.kernels));
  }
  p.threshold = threshold ? *threshold : m.threshold;
  p.strict = m.strict;
  return p;
}

// The dot product in eight independent lanes (GCC vector types), then summed: one serial
// chain of float additions waits out each addition's latency (squeezenet1_1's 25 gates are
// about 0.2M MACs a sample). The order of the additions is the executor's own, as the
// Vulkan shader's tree is: lane i sums channels i, i + 8, ... in order, then the bias, the
// lanes in order and the channels past the last whole eight.
namespace {
using Lanes = float __attribute__((vector_size(32)));

// z[j] for kernels k + j, j < N: N independent chains of additions. Always inlined, so
// that each clone of kernels_on() has it in its instruction set (called, it ran as
// baseline x86-64 code with the vectors on the stack).
template <int N>
__attribute__((always_inline)) inline void gate_sums(const GateParams& g, int64_t k, const float* pooled,
                                                     float* z) {
  const int64_t C = g.channels;
  const float* w = g.weights.data() + k * C;
  Lanes acc[N] = {};
  int64_t c = 0;
  for (; c + 8 <= C; c += 8) {
    Lanes b;
    std::memcpy(&b, pooled + c, sizeof b);
    for (int j = 0; j < N; ++j) {
      Lanes a;
      std::memcpy(&a, w + j * C + c, sizeof a);
      acc[j] += a * b;
    }
  }
  for (int j = 0; j < N; ++j) {
    float s = g.bias[size_t(k + j)];
    for (int i = 0; i < 8; ++i) s += acc[j][i];
    for (int64_t t = c; t < C; ++t) s += w[j * C + t] * pooled[t];
    z[j] = s;
  }
}

inline bool passes(const GateParams& g, float z) {
  const float sw = 1.0f / (1.0f + std::exp(-z));
  return g.strict ? sw > g.threshold : sw >= g.threshold;
}
}  // namespace

bool GateParams::on(int64_t k, const float* pooled) const {
  float z;
  gate_sums<1>(*this, k, pooled, &z);
  return passes(*this, z);
}

// Four kernels at a time, compiled per instruction set (on() alone, built for baseline
// x86-64, took about 0.13 ms of squeezenet1_1's 2 ms run at activity 1). No clone
// contracts a * b + acc into a fused multiply-add (neither avx2 nor avx512f implies fma),
// so every clone gives on()'s bits.
__attribute__((target_clones("avx512f", "avx2", "default"))) int64_t GateParams::kernels_on(
    const float* pooled, int32_t* on, int64_t k0, int64_t k1) const {
  constexpr int kAtOnce = 4;
  float z[kAtOnce];
  int64_t n = 0, k = k0;
  for (; k + kAtOnce <= k1; k += kAtOnce) {
    gate_sums<kAtOnce>(*this, k, pooled, z);
    for (int j = 0; j < kAtOnce; ++j)
      if (passes(*this, z[j])) on[n++] = int32_t(k + j);
  }
  for (; k < k1; ++k) {
    gate_sums<1>(*this, k, pooled, z);
    if (passes(*this, z[0])) on[n++] = int32_t(k);
  }
  return n;
}

// Defined after the clones: a call before their definition may not be multiversioned.
int64_t GateParams::kernels_on(const float* pooled, int32_t* on) const {
  return kernels_on(pooled, on, 0, kernels);
}

}  // namespace frugal::exec
