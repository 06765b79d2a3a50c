// GoogLeNet (Inception v1) as in torchvision, without the auxiliary heads and
// without transform_input. Every conv is torchvision's BasicConv2d: conv (no
// bias) + BatchNorm (eps 1e-3, as torchvision) + ReLU. As in torchvision, the
// "5x5" branch uses a 3x3 conv.
#include "zoo/graph_builder.h"
#include "zoo/networks.h"

namespace frugal::zoo {

namespace {

std::string basic_conv(GraphBuilder& b, const std::string& x, const std::string& p, int64_t out, int64_t k,
                       int64_t stride = 1, int64_t pad = 0) {
  std::string y = b.conv(x, p + ".conv", out, k, {stride, pad});
  return b.relu(b.bn(y, p + ".bn", 1e-3), p + ".relu");
}

std::string inception(GraphBuilder& b, const std::string& x, const std::string& p, int64_t ch1x1,
                      int64_t ch3x3red, int64_t ch3x3, int64_t ch5x5red, int64_t ch5x5, int64_t pool_proj) {
  std::string b1 = basic_conv(b, x, p + ".branch1", ch1x1, 1);
  std::string b2 = basic_conv(b, x, p + ".branch2.0", ch3x3red, 1);
  b2 = basic_conv(b, b2, p + ".branch2.1", ch3x3, 3, 1, 1);
  std::string b3 = basic_conv(b, x, p + ".branch3.0", ch5x5red, 1);
  b3 = basic_conv(b, b3, p + ".branch3.1", ch5x5, 3, 1, 1);
  std::string b4 = b.maxpool(x, p + ".branch4.0", 3, 1, 1, true);
  b4 = basic_conv(b, b4, p + ".branch4.1", pool_proj, 1);
  return b.concat({b1, b2, b3, b4}, p + ".concat");
}

}  // namespace

Graph build_googlenet(uint64_t seed) {
  GraphBuilder b("googlenet", seed);
  std::string x = b.input(3, 224, 224);
  x = basic_conv(b, x, "conv1", 64, 7, 2, 3);
  x = b.maxpool(x, "maxpool1", 3, 2, 0, true);
  x = basic_conv(b, x, "conv2", 64, 1);
  x = basic_conv(b, x, "conv3", 192, 3, 1, 1);
  x = b.maxpool(x, "maxpool2", 3, 2, 0, true);
  x = inception(b, x, "inception3a", 64, 96, 128, 16, 32, 32);
  x = inception(b, x, "inception3b", 128, 128, 192, 32, 96, 64);
  x = b.maxpool(x, "maxpool3", 3, 2, 0, true);
  x = inception(b, x, "inception4a", 192, 96, 208, 16, 48, 64);
  x = inception(b, x, "inception4b", 160, 112, 224, 24, 64, 64);
  x = inception(b, x, "inception4c", 128, 128, 256, 24, 64, 64);
  x = inception(b, x, "inception4d", 112, 144, 288, 32, 64, 64);
  x = inception(b, x, "inception4e", 256, 160, 320, 32, 128, 128);
  x = b.maxpool(x, "maxpool4", 2, 2, 0, true);
  x = inception(b, x, "inception5a", 256, 160, 320, 32, 128, 128);
  x = inception(b, x, "inception5b", 384, 192, 384, 48, 128, 128);
  x = b.flatten(b.global_avgpool(x, "avgpool"), "flatten");
  x = b.dropout(x, "dropout");
  return b.finish(b.gemm(x, "fc", 1000));
}

}  // namespace frugal::zoo
