// MobileNet v1 (1.0, 224) and MobileNet v2 (torchvision).
//
// v1 has no torchvision model: this is the canonical network of the paper
// (Howard et al. 2017, Table 1): a 3x3 stride-2 conv, 13 depthwise-separable
// blocks (depthwise 3x3 + BN + ReLU, pointwise 1x1 + BN + ReLU), global average
// pooling and a 1000-way linear layer with bias: 4,231,976 parameters.
//
// v2 follows torchvision: inverted residuals with ReLU6 (opset-13 Clip), a
// linear bottleneck, Dropout and a linear classifier. mobilenet_v2_silu is the
// same network with SiLU (x * Sigmoid(x)) in place of every ReLU6, the
// activation of EfficientNet: a training network for the time predictor
// (docs/PREDICTOR.md), not a torchvision model.
#include "zoo/graph_builder.h"
#include "zoo/networks.h"

namespace frugal::zoo {

namespace {

ConvOptions depthwise(int64_t channels, int64_t stride, int64_t kernel = 3) {
  ConvOptions o;
  o.stride = stride;
  o.pad = (kernel - 1) / 2;
  o.groups = channels;
  return o;
}

}  // namespace

Graph build_mobilenet_v1(uint64_t seed) {
  GraphBuilder b("mobilenet_v1", seed);
  std::string x = b.input(3, 224, 224);
  x = b.relu(b.bn(b.conv(x, "conv0", 32, 3, {2, 1}), "conv0.bn"), "conv0.relu");
  struct Block {
    int64_t out, stride;
  };
  const Block blocks[] = {{64, 1},  {128, 2}, {128, 1}, {256, 2}, {256, 1},  {512, 2}, {512, 1},
                          {512, 1}, {512, 1}, {512, 1}, {512, 1}, {1024, 2}, {1024, 1}};
  int i = 1;
  for (const Block& blk : blocks) {
    const std::string p = "blocks." + std::to_string(i++);
    x = b.conv(x, p + ".dw", b.channels(x), 3, depthwise(b.channels(x), blk.stride));
    x = b.relu(b.bn(x, p + ".dw.bn"), p + ".dw.relu");
    x = b.relu(b.bn(b.conv(x, p + ".pw", blk.out, 1), p + ".pw.bn"), p + ".pw.relu");
  }
  x = b.flatten(b.global_avgpool(x, "avgpool"), "flatten");
  return b.finish(b.gemm(x, "fc", 1000));
}

namespace {

// torchvision's Conv2dNormActivation with ReLU6 (or SiLU): names p.0 (conv), p.1 (bn), p.2.
std::string conv_bn_relu6(GraphBuilder& b, const std::string& x, const std::string& p, int64_t out, int64_t k,
                          const ConvOptions& o, bool silu) {
  const std::string y = b.bn(b.conv(x, p + ".0", out, k, o), p + ".1");
  return silu ? b.silu(y, p + ".2") : b.relu6(y, p + ".2");
}

std::string inverted_residual(GraphBuilder& b, const std::string& x, const std::string& p, int64_t out,
                              int64_t stride, int64_t expand_ratio, bool silu) {
  const int64_t in = b.channels(x);
  const int64_t hidden = in * expand_ratio;
  std::string y = x;
  int layer = 0;
  auto next = [&] { return p + ".conv." + std::to_string(layer++); };
  if (expand_ratio != 1) y = conv_bn_relu6(b, y, next(), hidden, 1, {}, silu);
  y = conv_bn_relu6(b, y, next(), hidden, 3, depthwise(hidden, stride), silu);
  y = b.conv(y, next(), out, 1);
  y = b.bn(y, next());
  return (stride == 1 && in == out) ? b.add(x, y, p + ".add") : y;
}

Graph mobilenet_v2(const char* name, uint64_t seed, bool silu) {
  GraphBuilder b(name, seed);
  std::string x = b.input(3, 224, 224);
  x = conv_bn_relu6(b, x, "features.0", 32, 3, {2, 1}, silu);
  struct Stage {
    int64_t t, c, n, s;
  };
  const Stage stages[] = {{1, 16, 1, 1}, {6, 24, 2, 2},  {6, 32, 3, 2}, {6, 64, 4, 2},
                          {6, 96, 3, 1}, {6, 160, 3, 2}, {6, 320, 1, 1}};
  int index = 1;
  for (const Stage& st : stages)
    for (int64_t i = 0; i < st.n; ++i)
      x = inverted_residual(b, x, "features." + std::to_string(index++), st.c, i == 0 ? st.s : 1, st.t, silu);
  x = conv_bn_relu6(b, x, "features." + std::to_string(index), 1280, 1, {}, silu);
  x = b.flatten(b.global_avgpool(x, "avgpool"), "flatten");
  x = b.dropout(x, "classifier.0");
  return b.finish(b.gemm(x, "classifier.1", 1000));
}

}  // namespace

Graph build_mobilenet_v2(uint64_t seed) { return mobilenet_v2("mobilenet_v2", seed, false); }

Graph build_mobilenet_v2_silu(uint64_t seed) { return mobilenet_v2("mobilenet_v2_silu", seed, true); }

}  // namespace frugal::zoo
