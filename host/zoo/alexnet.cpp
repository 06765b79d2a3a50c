// AlexNet as in torchvision (the single-tower "One weird trick" variant: no LRN,
// 64-192-384-256-256 channels). At 224x224 the features are already 6x6, so
// torchvision's AdaptiveAvgPool2d((6, 6)) is the identity and is left out.
#include "zoo/graph_builder.h"
#include "zoo/networks.h"

namespace frugal::zoo {

Graph build_alexnet(uint64_t seed) {
  GraphBuilder b("alexnet", seed);
  std::string x = b.input(3, 224, 224);
  x = b.relu(b.conv(x, "features.0", 64, 11, {4, 2, 1, 1, true}), "features.1");
  x = b.maxpool(x, "features.2", 3, 2);
  x = b.relu(b.conv(x, "features.3", 192, 5, {1, 2, 1, 1, true}), "features.4");
  x = b.maxpool(x, "features.5", 3, 2);
  x = b.relu(b.conv(x, "features.6", 384, 3, {1, 1, 1, 1, true}), "features.7");
  x = b.relu(b.conv(x, "features.8", 256, 3, {1, 1, 1, 1, true}), "features.9");
  x = b.relu(b.conv(x, "features.10", 256, 3, {1, 1, 1, 1, true}), "features.11");
  x = b.maxpool(x, "features.12", 3, 2);  // [N,256,6,6]
  x = b.flatten(x, "flatten");
  x = b.dropout(x, "classifier.0");
  x = b.relu(b.gemm(x, "classifier.1", 4096), "classifier.2");
  x = b.dropout(x, "classifier.3");
  x = b.relu(b.gemm(x, "classifier.4", 4096), "classifier.5");
  return b.finish(b.gemm(x, "classifier.6", 1000));
}

}  // namespace frugal::zoo
