// ResNet-18 and ResNet-50 in torchvision's layout (v1.5: the stride of a
// bottleneck sits on its 3x3 conv). Names follow torchvision's state_dict.
#include "zoo/graph_builder.h"
#include "zoo/networks.h"

namespace frugal::zoo {

namespace {

// Projection shortcut: 1x1 conv + BN, when the block changes shape.
std::string downsample(GraphBuilder& b, const std::string& x, const std::string& p, int64_t out,
                       int64_t stride) {
  std::string d = b.conv(x, p + ".downsample.0", out, 1, {stride, 0});
  return b.bn(d, p + ".downsample.1");
}

std::string basic_block(GraphBuilder& b, const std::string& x, const std::string& p, int64_t planes,
                        int64_t stride) {
  std::string y = b.conv(x, p + ".conv1", planes, 3, {stride, 1});
  y = b.relu(b.bn(y, p + ".bn1"), p + ".relu1");
  y = b.conv(y, p + ".conv2", planes, 3, {1, 1});
  y = b.bn(y, p + ".bn2");
  std::string shortcut = (stride != 1 || b.channels(x) != planes) ? downsample(b, x, p, planes, stride) : x;
  return b.relu(b.add(y, shortcut, p + ".add"), p + ".relu2");
}

std::string bottleneck(GraphBuilder& b, const std::string& x, const std::string& p, int64_t planes,
                       int64_t stride) {
  const int64_t out = planes * 4;
  std::string y = b.relu(b.bn(b.conv(x, p + ".conv1", planes, 1), p + ".bn1"), p + ".relu1");
  y = b.relu(b.bn(b.conv(y, p + ".conv2", planes, 3, {stride, 1}), p + ".bn2"), p + ".relu2");
  y = b.bn(b.conv(y, p + ".conv3", out, 1, {}), p + ".bn3");
  std::string shortcut = (stride != 1 || b.channels(x) != out) ? downsample(b, x, p, out, stride) : x;
  return b.relu(b.add(y, shortcut, p + ".add"), p + ".relu3");
}

Graph build_resnet(const std::string& name, bool use_bottleneck, const int (&blocks)[4], uint64_t seed) {
  GraphBuilder b(name, seed);
  std::string x = b.input(3, 224, 224);
  x = b.relu(b.bn(b.conv(x, "conv1", 64, 7, {2, 3}), "bn1"), "relu");
  x = b.maxpool(x, "maxpool", 3, 2, 1);
  const int64_t planes[4] = {64, 128, 256, 512};
  for (int layer = 0; layer < 4; ++layer) {
    for (int i = 0; i < blocks[layer]; ++i) {
      const std::string p = "layer" + std::to_string(layer + 1) + "." + std::to_string(i);
      const int64_t stride = (layer > 0 && i == 0) ? 2 : 1;
      x = use_bottleneck ? bottleneck(b, x, p, planes[layer], stride)
                         : basic_block(b, x, p, planes[layer], stride);
    }
  }
  x = b.flatten(b.global_avgpool(x, "avgpool"), "flatten");
  return b.finish(b.gemm(x, "fc", 1000));
}

}  // namespace

Graph build_resnet18(uint64_t seed) { return build_resnet("resnet18", false, {2, 2, 2, 2}, seed); }
Graph build_resnet50(uint64_t seed) { return build_resnet("resnet50", true, {3, 4, 6, 3}, seed); }

}  // namespace frugal::zoo
