// Small zoo networks (unit); see zoo_macs.h for the reference figures.
#include "zoo_macs.h"

using namespace frugal::test;

TEST_CASE("zoo MACs equal the published figures (small networks)", "[onnx][macs][zoo]") {
  check_published("resnet18", 1.814);
  check_published("mobilenet_v1", 0.569);
  check_published("mobilenet_v2", 0.301);
  check_published("squeezenet1_0", 0.819);
  check_published("squeezenet1_1", 0.349);
  check_published("googlenet", 1.498);
  check_published("efficientnet_b0", 0.386);
}
