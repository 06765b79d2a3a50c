// SqueezeNet 1.0 and 1.1 as in torchvision: Fire modules (squeeze 1x1, then
// expand 1x1 and 3x3 concatenated), ceil-mode max pooling, and a 1x1 conv
// classifier followed by global average pooling. No BatchNorm.
#include "zoo/graph_builder.h"
#include "zoo/networks.h"

namespace frugal::zoo {

namespace {

std::string fire(GraphBuilder& b, const std::string& x, const std::string& p, int64_t squeeze,
                 int64_t expand1x1, int64_t expand3x3) {
  std::string s =
      b.relu(b.conv(x, p + ".squeeze", squeeze, 1, {1, 0, 1, 1, true}), p + ".squeeze_activation");
  std::string e1 =
      b.relu(b.conv(s, p + ".expand1x1", expand1x1, 1, {1, 0, 1, 1, true}), p + ".expand1x1_activation");
  std::string e3 =
      b.relu(b.conv(s, p + ".expand3x3", expand3x3, 3, {1, 1, 1, 1, true}), p + ".expand3x3_activation");
  return b.concat({e1, e3}, p + ".concat");
}

std::string classifier(GraphBuilder& b, std::string x) {
  x = b.dropout(x, "classifier.0");
  x = b.relu(b.conv(x, "classifier.1", 1000, 1, {1, 0, 1, 1, true}), "classifier.2");
  return b.flatten(b.global_avgpool(x, "classifier.3"), "flatten");
}

}  // namespace

Graph build_squeezenet1_0(uint64_t seed) {
  GraphBuilder b("squeezenet1_0", seed);
  std::string x = b.input(3, 224, 224);
  x = b.relu(b.conv(x, "features.0", 96, 7, {2, 0, 1, 1, true}), "features.1");
  x = b.maxpool(x, "features.2", 3, 2, 0, true);
  x = fire(b, x, "features.3", 16, 64, 64);
  x = fire(b, x, "features.4", 16, 64, 64);
  x = fire(b, x, "features.5", 32, 128, 128);
  x = b.maxpool(x, "features.6", 3, 2, 0, true);
  x = fire(b, x, "features.7", 32, 128, 128);
  x = fire(b, x, "features.8", 48, 192, 192);
  x = fire(b, x, "features.9", 48, 192, 192);
  x = fire(b, x, "features.10", 64, 256, 256);
  x = b.maxpool(x, "features.11", 3, 2, 0, true);
  x = fire(b, x, "features.12", 64, 256, 256);
  return b.finish(classifier(b, x));
}

Graph build_squeezenet1_1(uint64_t seed) {
  GraphBuilder b("squeezenet1_1", seed);
  std::string x = b.input(3, 224, 224);
  x = b.relu(b.conv(x, "features.0", 64, 3, {2, 0, 1, 1, true}), "features.1");
  x = b.maxpool(x, "features.2", 3, 2, 0, true);
  x = fire(b, x, "features.3", 16, 64, 64);
  x = fire(b, x, "features.4", 16, 64, 64);
  x = b.maxpool(x, "features.5", 3, 2, 0, true);
  x = fire(b, x, "features.6", 32, 128, 128);
  x = fire(b, x, "features.7", 32, 128, 128);
  x = b.maxpool(x, "features.8", 3, 2, 0, true);
  x = fire(b, x, "features.9", 48, 192, 192);
  x = fire(b, x, "features.10", 48, 192, 192);
  x = fire(b, x, "features.11", 64, 256, 256);
  x = fire(b, x, "features.12", 64, 256, 256);
  return b.finish(classifier(b, x));
}

}  // namespace frugal::zoo
