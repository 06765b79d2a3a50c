// Large zoo networks (slow: about 0.7 GB of weights in all); see zoo_macs.h.
#include "zoo_macs.h"

using namespace frugal::test;

TEST_CASE("zoo MACs equal the published figures (large networks)", "[onnx][macs][zoo]") {
  check_published("resnet50", 4.089);
  check_published("alexnet", 0.714);
  check_published("vgg16_bn", 15.470);
}
