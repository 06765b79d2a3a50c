// A gate's switches as the executors' gated kernels compute them
// (common/gate_params.h): GateParams::kernels_on(), several kernels at a time
// and compiled per instruction set, against on() one kernel at a time (the
// same bits: the same kernels on at every threshold) and against the float64
// sigmoid of the 1x1 conv of the pooled input, on shapes whose kernel count is
// not a multiple of four and whose channel count is not a multiple of eight.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>
#include <vector>

#include "common/gate_params.h"

using frugal::exec::GateParams;

namespace {

GateParams random_gate(int64_t kernels, int64_t channels, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  GateParams g;
  g.kernels = kernels;
  g.channels = channels;
  for (int64_t i = 0; i < kernels * channels; ++i) g.weights.push_back(u(rng));
  for (int64_t k = 0; k < kernels; ++k) g.bias.push_back(0.5f * u(rng));
  return g;
}

std::vector<float> random_pooled(int64_t channels, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  std::vector<float> p;
  for (int64_t c = 0; c < channels; ++c) p.push_back(u(rng));
  return p;
}

// sigmoid(bias + w . pooled) in float64.
double sw64(const GateParams& g, int64_t k, const std::vector<float>& pooled) {
  double z = g.bias[size_t(k)];
  for (int64_t c = 0; c < g.channels; ++c)
    z += double(g.weights[size_t(k * g.channels + c)]) * double(pooled[size_t(c)]);
  return 1.0 / (1.0 + std::exp(-z));
}

std::vector<int32_t> kernels_on(const GateParams& g, const std::vector<float>& pooled) {
  std::vector<int32_t> on(size_t(g.kernels), -1);
  on.resize(size_t(g.kernels_on(pooled.data(), on.data())));
  return on;
}

}  // namespace

TEST_CASE("gate params: kernels_on() switches on()'s kernels, and the float64 gate's", "[gating]") {
  for (int64_t kernels : {1, 3, 4, 7, 16, 64}) {
    for (int64_t channels : {1, 5, 8, 13, 64, 131}) {
      GateParams g = random_gate(kernels, channels, uint32_t(kernels * 1000 + channels));
      const std::vector<float> pooled = random_pooled(channels, uint32_t(channels));
      for (float t : {0.0f, 0.2f, 0.5f, 0.8f, 1.0f}) {
        for (bool strict : {false, true}) {
          g.threshold = t;
          g.strict = strict;
          INFO("kernels " << kernels << " channels " << channels << " threshold " << t << " strict "
                          << strict);
          std::vector<int32_t> want_on, want64;
          for (int64_t k = 0; k < kernels; ++k) {
            if (g.on(k, pooled.data())) want_on.push_back(int32_t(k));
            const double sw = sw64(g, k, pooled);
            if (std::abs(sw - double(t)) < 1e-4) continue;  // too close to call in float32
            if (strict ? sw > double(t) : sw >= double(t)) want64.push_back(int32_t(k));
          }
          const std::vector<int32_t> got = kernels_on(g, pooled);
          CHECK(got == want_on);
          std::vector<int32_t> clear;  // got without the kernels too close to call
          for (int32_t k : got)
            if (std::abs(sw64(g, k, pooled) - double(t)) >= 1e-4) clear.push_back(k);
          CHECK(clear == want64);
        }
      }
    }
  }
}

TEST_CASE("gate params: a hand-checked gate", "[gating]") {
  // Five kernels over nine channels (one past a whole eight): kernel k weighs channel c by
  // (c == k) - (c == 8), so z = bias + pooled[k] - pooled[8].
  GateParams g;
  g.kernels = 5;
  g.channels = 9;
  g.weights.assign(45, 0.0f);
  for (int64_t k = 0; k < 5; ++k) {
    g.weights[size_t(k * 9 + k)] = 1.0f;
    g.weights[size_t(k * 9 + 8)] = -1.0f;
  }
  g.bias = {0.0f, 0.0f, 0.0f, 0.0f, 3.0f};
  const std::vector<float> pooled = {2, -2, 0.5f, -0.5f, -4, 0, 0, 0, 0.25f};
  // z = 1.75, -2.25, 0.25, -0.75, -1.25: sigmoid 0.852, 0.095, 0.562, 0.321, 0.223.
  g.threshold = 0.5f;
  CHECK(kernels_on(g, pooled) == std::vector<int32_t>{0, 2});
  g.threshold = 0.2f;
  CHECK(kernels_on(g, pooled) == std::vector<int32_t>{0, 2, 3, 4});
  g.threshold = 0.9f;
  CHECK(kernels_on(g, pooled).empty());
}
