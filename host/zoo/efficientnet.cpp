// EfficientNet-B0 as in torchvision: MBConv blocks (1x1 expansion, depthwise
// conv, squeeze-excitation, linear 1x1 projection) with SiLU written as
// x * Sigmoid(x), residual Adds where shapes allow (stochastic depth is the
// identity at inference), Dropout and a linear classifier.
#include <algorithm>

#include "zoo/graph_builder.h"
#include "zoo/networks.h"

namespace frugal::zoo {

namespace {

// torchvision's Conv2dNormActivation with SiLU: names p.0 (conv), p.1 (bn), p.2.
std::string conv_bn_silu(GraphBuilder& b, const std::string& x, const std::string& p, int64_t out, int64_t k,
                         int64_t stride = 1, int64_t groups = 1) {
  ConvOptions o;
  o.stride = stride;
  o.pad = (k - 1) / 2;
  o.groups = groups;
  return b.silu(b.bn(b.conv(x, p + ".0", out, k, o), p + ".1"), p + ".2");
}

// SqueezeExcitation: GlobalAveragePool -> 1x1 conv -> SiLU -> 1x1 conv -> Sigmoid -> Mul.
std::string squeeze_excitation(GraphBuilder& b, const std::string& x, const std::string& p, int64_t squeeze) {
  ConvOptions fc;
  fc.bias = true;
  std::string s = b.global_avgpool(x, p + ".avgpool");
  s = b.silu(b.conv(s, p + ".fc1", squeeze, 1, fc), p + ".activation");
  s = b.sigmoid(b.conv(s, p + ".fc2", b.channels(x), 1, fc), p + ".scale_activation");
  return b.mul(x, s, p + ".scale");
}

std::string mbconv(GraphBuilder& b, const std::string& x, const std::string& p, int64_t expand_ratio,
                   int64_t kernel, int64_t stride, int64_t out) {
  const int64_t in = b.channels(x);
  const int64_t expanded = in * expand_ratio;  // already a multiple of 8 for B0
  std::string y = x;
  int layer = 0;
  auto next = [&] { return p + ".block." + std::to_string(layer++); };
  if (expanded != in) y = conv_bn_silu(b, y, next(), expanded, 1);
  y = conv_bn_silu(b, y, next(), expanded, kernel, stride, expanded);
  y = squeeze_excitation(b, y, next(), std::max<int64_t>(1, in / 4));
  const std::string proj = next();
  y = b.bn(b.conv(y, proj + ".0", out, 1), proj + ".1");
  return (stride == 1 && in == out) ? b.add(y, x, p + ".add") : y;
}

}  // namespace

Graph build_efficientnet_b0(uint64_t seed) {
  GraphBuilder b("efficientnet_b0", seed);
  std::string x = b.input(3, 224, 224);
  x = conv_bn_silu(b, x, "features.0", 32, 3, 2);
  struct Stage {
    int64_t expand, kernel, stride, out, layers;
  };
  const Stage stages[] = {{1, 3, 1, 16, 1},  {6, 3, 2, 24, 2},  {6, 5, 2, 40, 2}, {6, 3, 2, 80, 3},
                          {6, 5, 1, 112, 3}, {6, 5, 2, 192, 4}, {6, 3, 1, 320, 1}};
  int index = 1;
  for (const Stage& st : stages) {
    for (int64_t i = 0; i < st.layers; ++i) {
      const std::string p = "features." + std::to_string(index) + "." + std::to_string(i);
      x = mbconv(b, x, p, st.expand, st.kernel, i == 0 ? st.stride : 1, st.out);
    }
    ++index;
  }
  x = conv_bn_silu(b, x, "features." + std::to_string(index), 1280, 1);
  x = b.flatten(b.global_avgpool(x, "avgpool"), "flatten");
  x = b.dropout(x, "classifier.0");
  return b.finish(b.gemm(x, "classifier.1", 1000));
}

}  // namespace frugal::zoo
