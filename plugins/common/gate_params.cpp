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
// Vulkan shader's tree is.
namespace {
using Lanes = float __attribute__((vector_size(32)));
}  // namespace

bool GateParams::on(int64_t k, const float* pooled) const {
  const float* w = weights.data() + k * channels;
  Lanes acc = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t c = 0;
  for (; c + 8 <= channels; c += 8) {
    Lanes a, b;
    std::memcpy(&a, w + c, sizeof a);
    std::memcpy(&b, pooled + c, sizeof b);
    acc += a * b;
  }
  float z = bias[size_t(k)];
  for (int i = 0; i < 8; ++i) z += acc[i];
  for (; c < channels; ++c) z += w[c] * pooled[c];
  const float sw = 1.0f / (1.0f + std::exp(-z));
  return strict ? sw > threshold : sw >= threshold;
}

}  // namespace frugal::exec
