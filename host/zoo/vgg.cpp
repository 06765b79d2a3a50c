// VGG-16 with BatchNorm (torchvision vgg16_bn, configuration "D"). At 224x224 the
// features are already 7x7, so AdaptiveAvgPool2d((7, 7)) is the identity and is
// left out. Names are torchvision's Sequential indices.
#include "zoo/graph_builder.h"
#include "zoo/networks.h"

namespace frugal::zoo {

Graph build_vgg16_bn(uint64_t seed) {
  GraphBuilder b("vgg16_bn", seed);
  std::string x = b.input(3, 224, 224);
  const int64_t kPool = 0;
  const int64_t cfg[] = {64,    64,  kPool, 128, 128,   kPool, 256, 256, 256,
                         kPool, 512, 512,   512, kPool, 512,   512, 512, kPool};
  int index = 0;
  for (int64_t c : cfg) {
    auto name = [&](int offset) { return "features." + std::to_string(index + offset); };
    if (c == kPool) {
      x = b.maxpool(x, name(0), 2, 2);
      index += 1;
    } else {
      x = b.conv(x, name(0), c, 3, {1, 1, 1, 1, true});
      x = b.relu(b.bn(x, name(1)), name(2));
      index += 3;
    }
  }
  x = b.flatten(x, "flatten");  // [N, 512*7*7]
  x = b.relu(b.gemm(x, "classifier.0", 4096), "classifier.1");
  x = b.dropout(x, "classifier.2");
  x = b.relu(b.gemm(x, "classifier.3", 4096), "classifier.4");
  x = b.dropout(x, "classifier.5");
  return b.finish(b.gemm(x, "classifier.6", 1000));
}

}  // namespace frugal::zoo
