// Small networks for tests: fast to build and to evaluate, covering the op set
// and the BatchNorm patterns that folding, planning and executors must handle.
#include "zoo/graph_builder.h"
#include "zoo/networks.h"

namespace frugal::zoo {

namespace {

std::string conv_bn_relu(GraphBuilder& b, const std::string& x, const std::string& p, int64_t out, int64_t k,
                         int64_t stride, int64_t pad) {
  std::string y = b.conv(x, p + ".conv", out, k, {stride, pad});
  return b.relu(b.bn(y, p + ".bn"), p + ".relu");
}

}  // namespace

// [N,3,8,8] -> [N,5]: two conv-bn-relu with 4 channels, pool, linear.
Graph build_toy_tiny(uint64_t seed) {
  GraphBuilder b("toy_tiny", seed);
  std::string x = b.input(3, 8, 8);
  x = conv_bn_relu(b, x, "block1", 4, 3, 1, 1);
  x = conv_bn_relu(b, x, "block2", 4, 3, 2, 1);
  x = b.flatten(b.global_avgpool(x, "avgpool"), "flatten");
  return b.finish(b.gemm(x, "fc", 5));
}

// [N,3,32,32] -> [N,10]: a plain chain, conv-bn-relu x3 + pool + linear.
Graph build_toy_linear(uint64_t seed) {
  GraphBuilder b("toy_linear", seed);
  std::string x = b.input(3, 32, 32);
  x = conv_bn_relu(b, x, "block1", 8, 3, 1, 1);
  x = conv_bn_relu(b, x, "block2", 16, 3, 2, 1);
  x = conv_bn_relu(b, x, "block3", 16, 3, 1, 1);
  x = b.flatten(b.global_avgpool(x, "avgpool"), "flatten");
  return b.finish(b.gemm(x, "fc", 10));
}

// [N,3,16,16] -> [N,10]: a residual block (Add join), two branches joined by
// Concat, and a BN after the Concat feeding an unpadded 1x1 conv (foldable
// forward, not backward).
Graph build_toy_branched(uint64_t seed) {
  GraphBuilder b("toy_branched", seed);
  std::string x = b.input(3, 16, 16);
  x = conv_bn_relu(b, x, "stem", 8, 3, 1, 1);

  std::string r = b.relu(b.bn(b.conv(x, "res.conv1", 8, 3, {1, 1}), "res.bn1"), "res.relu1");
  r = b.bn(b.conv(r, "res.conv2", 8, 3, {1, 1}), "res.bn2");
  x = b.relu(b.add(r, x, "res.add"), "res.relu2");

  std::string a = b.relu(b.conv(x, "branch_a.conv", 8, 1, {1, 0, 1, 1, true}), "branch_a.relu");
  std::string c = b.maxpool(x, "branch_b.pool", 3, 1, 1);
  c = conv_bn_relu(b, c, "branch_b", 8, 3, 1, 1);
  x = b.concat({a, c}, "join");

  x = b.bn(x, "join.bn");
  x = b.relu(b.conv(x, "head.conv", 16, 1, {1, 0, 1, 1, true}), "head.relu");
  x = b.flatten(b.global_avgpool(x, "avgpool"), "flatten");
  return b.finish(b.gemm(x, "fc", 10));
}

// [N,3,16,16] -> [N,10] probabilities: every op of the zoo's op set at least once
// (Conv, BatchNormalization, Relu, Clip, Sigmoid, Mul, Add, Concat, MaxPool,
// AveragePool, GlobalAveragePool, LRN, Gemm, MatMul, Flatten, Reshape, Softmax,
// Dropout, Identity), with the less common attributes: conv bias, grouped and
// dilated conv, ceil-mode max pooling, average pooling that counts padding.
Graph build_toy_allops(uint64_t seed) {
  GraphBuilder b("toy_allops", seed);
  std::string x = b.input(3, 16, 16);
  x = b.conv(x, "conv1", 8, 3, {1, 1, 1, 1, true});  // [N,8,16,16]
  x = b.lrn(x, "lrn", 3, 1e-2, 0.75, 1.0);
  x = b.relu6(x, "relu6");
  x = b.avgpool(x, "avgpool", 3, 2, 1, true);  // [N,8,8,8]
  x = b.bn(x, "bn1");
  std::string g = b.conv(x, "conv_grouped", 8, 3, {1, 2, 2, 2});  // dilated, 2 groups
  x = b.silu(b.add(x, g, "add"), "silu");

  // Squeeze-excitation.
  std::string s = b.global_avgpool(x, "se.pool");
  s = b.relu(b.conv(s, "se.fc1", 4, 1, {1, 0, 1, 1, true}), "se.relu");
  s = b.sigmoid(b.conv(s, "se.fc2", 8, 1, {1, 0, 1, 1, true}), "se.gate");
  x = b.mul(x, s, "se.scale");

  std::string r = b.relu(x, "relu");
  x = b.concat({x, r}, "concat");              // [N,16,8,8]
  x = b.maxpool(x, "maxpool", 3, 2, 0, true);  // [N,16,4,4]
  x = b.identity(b.dropout(x, "dropout"), "identity");
  x = b.flatten(x, "flatten");  // [N,256]
  x = b.reshape(x, "reshape1", {0, 16, 16});
  x = b.matmul(x, "matmul", 12);          // [N,16,12]
  x = b.reshape(x, "reshape2", {0, -1});  // [N,192]
  x = b.gemm(x, "fc", 10);
  return b.finish(b.softmax(x, "softmax", 1));
}

}  // namespace frugal::zoo
