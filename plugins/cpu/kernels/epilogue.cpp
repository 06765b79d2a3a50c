#include "kernels/epilogue.h"

#include <algorithm>
#include <cmath>

#include "frugal/error.h"
#include "kernels/vector_math.h"

namespace frugal::cpu {

void Epilogue::apply_step(const Step& s, float* x, int64_t c, int64_t count) {
  using ops::ActivationKind;
  const float a = s.a, b = s.b;
  if (s.kind == kAffine) {
    affine_inplace(x, count, s.scale[size_t(c)], s.shift[size_t(c)]);
    return;
  }
  if (s.kind == kSwish) {
    swish_inplace(x, count);
    return;
  }
  // Only the packed 1x1 kernel takes a residual step (ConvKernel::residual_epilogue).
  if (s.kind == kResidual) throw Error("epilogue: a residual Add outside the packed 1x1 kernel");
  switch (ActivationKind(s.kind)) {
    case ActivationKind::Relu:
      relu_inplace(x, count);
      break;
    case ActivationKind::Clip:
      clip_inplace(x, count, a, b);
      break;
    case ActivationKind::Sigmoid:
      sigmoid_inplace(x, count);
      break;
    case ActivationKind::HardSigmoid:
      for (int64_t i = 0; i < count; ++i) x[i] = std::min(std::max(a * x[i] + b, 0.0f), 1.0f);
      break;
    case ActivationKind::HardSwish:
      for (int64_t i = 0; i < count; ++i) x[i] *= std::min(std::max(x[i] / 6.0f + 0.5f, 0.0f), 1.0f);
      break;
    case ActivationKind::LeakyRelu:
      for (int64_t i = 0; i < count; ++i) x[i] = x[i] >= 0.0f ? x[i] : a * x[i];
      break;
  }
}

// Several steps run block by block, so that each block stays in L1 between them; an affine
// step followed by Relu (a conv's bias or BatchNormalization, then Relu) is one pass.
void Epilogue::apply(float* x, int64_t c, int64_t count) const {
  constexpr int64_t kBlock = 2048;
  if (steps_.size() == 1) {
    apply_step(steps_[0], x, c, count);
    return;
  }
  auto relu_follows = [&](size_t k) {
    return steps_[k].kind == kAffine && k + 1 < steps_.size() && steps_[k + 1].is(ops::ActivationKind::Relu);
  };
  for (int64_t i = 0; i < count; i += kBlock) {
    const int64_t n = std::min(kBlock, count - i);
    for (size_t k = 0; k < steps_.size(); ++k) {
      if (relu_follows(k)) {
        affine_relu_inplace(x + i, n, steps_[k].scale[size_t(c)], steps_[k].shift[size_t(c)]);
        ++k;
        continue;
      }
      apply_step(steps_[k], x + i, c, n);
    }
  }
}

void Epilogue::apply_rows(float* x, int64_t rows, int64_t channels) const {
  for (int64_t r = 0; r < rows; ++r) {
    float* row = x + r * channels;
    for (const Step& s : steps_) {
      if (s.kind == kAffine) {
        for (int64_t c = 0; c < channels; ++c) row[c] = s.scale[size_t(c)] * row[c] + s.shift[size_t(c)];
      } else {
        apply_step(s, row, 0, channels);  // channel-independent: the channel index is not read
      }
    }
  }
}

void Epilogue::apply_tensor(float* x, int64_t outer, int64_t channels, int64_t inner,
                            ThreadPool* pool) const {
  if (steps_.empty()) return;
  if (inner == 1 && channels > 1) {
    apply_rows(x, outer, channels);
    return;
  }
  const int64_t planes = outer * channels;
  parallel_range(pool, planes, std::max<int64_t>(1, 32768 / std::max<int64_t>(1, inner)),
                 [&](int64_t p0, int64_t p1) {
                   for (int64_t p = p0; p < p1; ++p) apply(x + p * inner, p % channels, inner);
                 });
}

}  // namespace frugal::cpu
