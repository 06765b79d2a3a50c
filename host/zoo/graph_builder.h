// A small helper that builds zoo networks node by node. Every method appends one
// node (two for silu), creates its weights, tracks the output shape
// ([N, C, H, W] with N symbolic) and returns the name of the output value, so a
// network reads like its PyTorch definition:
//
//   std::string x = b.input(3, 224, 224);
//   x = b.relu(b.bn(b.conv(x, "conv1", 64, 7, 2, 3), "bn1"), "relu");
//
// Node names are the torchvision module names ("layer1.0.conv1"); a node's
// output value has the node's name; weights are "<node>.weight", "<node>.bias",
// "<node>.running_mean", ... as in a torchvision state_dict.
//
// Weight scale: the builder propagates estimates of each value's mean and mean
// square (activation_moments.h; from the weights it drew and a Gaussian model of
// each op) and scales every conv/linear weight so that the layer's output has
// mean square about 1, as He initialisation does for a plain ReLU network. Activations then stay O(1) through
// any depth and the logits are O(1), with BN statistics that stay "realistic"
// (running_var in [0.5, 2]) rather than calibrated on data.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "frugal/model/graph.h"
#include "zoo/activation_moments.h"

namespace frugal::zoo {

struct ConvOptions {
  int64_t stride = 1;
  int64_t pad = 0;  // symmetric, all four sides
  int64_t groups = 1;
  int64_t dilation = 1;
  bool bias = false;
};

class GraphBuilder {
 public:
  GraphBuilder(std::string graph_name, uint64_t seed);

  // The graph input "input" with shape [N, channels, height, width].
  std::string input(int64_t channels, int64_t height, int64_t width);

  std::string conv(const std::string& x, const std::string& name, int64_t out_channels, int64_t kernel,
                   const ConvOptions& o = {});
  // Eval-mode BatchNormalization with random realistic statistics: gamma ~ N(1, 0.1)
  // with about 7% of channels (at least one) negated, beta ~ N(0, 0.1),
  // running_mean ~ N(0, 0.1), running_var log-uniform in [0.5, 2].
  std::string bn(const std::string& x, const std::string& name, double epsilon = 1e-5);
  std::string relu(const std::string& x, const std::string& name);
  std::string relu6(const std::string& x, const std::string& name);  // Clip(x, 0, 6), opset-13 form
  std::string sigmoid(const std::string& x, const std::string& name);
  std::string silu(const std::string& x, const std::string& name);  // x * Sigmoid(x)
  std::string add(const std::string& a, const std::string& b, const std::string& name);
  std::string mul(const std::string& a, const std::string& b, const std::string& name);
  std::string concat(const std::vector<std::string>& xs, const std::string& name);  // channel axis
  std::string maxpool(const std::string& x, const std::string& name, int64_t kernel, int64_t stride,
                      int64_t pad = 0, bool ceil_mode = false);
  std::string avgpool(const std::string& x, const std::string& name, int64_t kernel, int64_t stride,
                      int64_t pad = 0, bool count_include_pad = false);
  std::string global_avgpool(const std::string& x, const std::string& name);
  std::string lrn(const std::string& x, const std::string& name, int64_t size, double alpha = 1e-4,
                  double beta = 0.75, double bias = 1.0);
  std::string flatten(const std::string& x, const std::string& name);  // axis 1
  // Linear layer as torch exports it: Gemm(x, W[out, in], b, transB=1).
  std::string gemm(const std::string& x, const std::string& name, int64_t out_features);
  // x[..., in] @ W[in, out] (no bias).
  std::string matmul(const std::string& x, const std::string& name, int64_t out_features);
  // Reshape to `shape` (ONNX semantics: 0 copies the input dim, -1 is inferred).
  std::string reshape(const std::string& x, const std::string& name, const std::vector<int64_t>& shape);
  std::string softmax(const std::string& x, const std::string& name, int64_t axis = -1);
  std::string dropout(const std::string& x, const std::string& name);  // identity at inference
  std::string identity(const std::string& x, const std::string& name);

  // Channels (dim 1) and full shape of a value built so far; dim 0 is -1 (batch N).
  int64_t channels(const std::string& x) const;
  const std::vector<int64_t>& shape(const std::string& x) const;
  // The builder's estimate of a value's mean and E[x^2] (see the top of this file).
  const Moments& moments(const std::string& x) const;

  // Renames `x` to "output", declares it the graph output, checks that the
  // graph is well formed and returns it.
  Graph finish(const std::string& x);

 private:
  Node& add_node(const std::string& op, const std::string& name, std::vector<std::string> inputs);
  std::string define_value(const std::string& name, std::vector<int64_t> shape, Moments m);
  std::string elementwise(const std::string& op, const std::string& x, const std::string& name, Moments m);
  std::string binary(const std::string& op, const std::string& a, const std::string& b,
                     const std::string& name);
  std::string pool(const std::string& op, const std::string& x, const std::string& name, int64_t kernel,
                   int64_t stride, int64_t pad, bool ceil_mode);
  void add_float(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& values);
  // Zero-mean weights with standard deviation `stddev`, drawn from the tensor's own stream.
  void add_random(const std::string& name, const std::vector<int64_t>& dims, double stddev);
  void require_rank(const std::string& x, size_t rank, const std::string& name) const;

  Graph g_;
  uint64_t seed_;
  std::map<std::string, std::vector<int64_t>> shapes_;
  std::map<std::string, Moments> moments_;
};

}  // namespace frugal::zoo
