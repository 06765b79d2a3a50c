#include "gated_graphs.h"

#include <random>

namespace gate_test {

namespace {

class Maker {
 public:
  explicit Maker(uint64_t seed) : rng_(seed) {
    g.name = "gated_test";
    g.opsets = {{"", 13}};
  }
  void input(const std::string& name, const std::vector<int64_t>& dims) {
    frugal::TensorDesc t;
    t.name = name;
    t.shape = frugal::make_shape(dims);
    t.shape[0] = frugal::Dim{-1, "N"};
    t.has_shape = true;
    g.tensors[name] = t;
    g.inputs.push_back(name);
  }
  std::string random(const std::string& name, const std::vector<int64_t>& dims, float scale,
                     float offset = 0) {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    std::vector<float> v(static_cast<size_t>(n));
    std::uniform_real_distribution<float> u(-scale, scale);
    for (float& f : v) f = u(rng_) + offset;
    g.add_initializer(name, frugal::DType::Float32, dims, v.data());
    return name;
  }
  std::string scalar(const std::string& name, float value) {
    g.add_initializer(name, frugal::DType::Float32, {}, &value);
    return name;
  }
  frugal::Node& node(const std::string& op, const std::vector<std::string>& in, const std::string& out) {
    frugal::Node n;
    n.name = out;
    n.op_type = op;
    n.inputs = in;
    n.outputs = {out};
    g.nodes.push_back(n);
    return g.nodes.back();
  }
  frugal::Graph g;

 private:
  std::mt19937_64 rng_;
};

}  // namespace

frugal::Graph gated_graph(const GatedGraphOptions& o) {
  Maker b(o.seed);
  const int64_t C = o.channels, M = o.kernels, K = o.gate_channels;
  b.input("x", {1, C, o.size, o.size});
  std::string gate_in = "x";
  if (o.gate_reads_other) gate_in = b.node("Relu", {"x"}, "x_relu").outputs[0];
  // The gate: GAP and the 1x1 conv in either order, Sigmoid, the threshold.
  b.random("gw", {K, C, 1, 1}, 1.0f);
  b.random("gb", {K}, 0.5f, o.gate_bias);
  std::string z;
  if (o.pool_first) {
    b.node("GlobalAveragePool", {gate_in}, "g_pool");
    z = b.node("Conv", {"g_pool", "gw", "gb"}, "g_conv").outputs[0];
  } else {
    b.node("Conv", {gate_in, "gw", "gb"}, "g_conv");
    z = b.node("GlobalAveragePool", {"g_conv"}, "g_pool").outputs[0];
  }
  std::string mask = b.node("Sigmoid", {z}, "g_sw").outputs[0];
  if (!o.soft) {
    b.scalar("g_t", o.threshold);
    b.node(o.strict ? "Greater" : "GreaterOrEqual", {"g_sw", "g_t"}, "g_on");
    b.node("Cast", {"g_on"}, "g_mask").set_attr_int("to", 1);
    mask = "g_mask";
  }
  // The gated conv.
  const int64_t k = o.kernel, pad = k / 2;
  const std::vector<int64_t> shape = o.conv1_shape.empty() ? std::vector<int64_t>{k, k} : o.conv1_shape,
                             strides = o.conv1_strides.empty() ? std::vector<int64_t>{1, 1} : o.conv1_strides,
                             pads = o.conv1_pads.empty() ? std::vector<int64_t>{pad, pad, pad, pad}
                                                         : o.conv1_pads,
                             dil = o.conv1_dilations.empty() ? std::vector<int64_t>{1, 1} : o.conv1_dilations;
  b.random("w1", {M, C, shape[0], shape[1]}, 0.3f);
  b.random("b1", {M}, 0.1f);
  frugal::Node& conv1 = b.node("Conv", {"x", "w1", "b1"}, "conv1");
  conv1.set_attr_ints("pads", pads);
  conv1.set_attr_ints("strides", strides);
  conv1.set_attr_ints("dilations", dil);
  // conv1's output size (rows, columns).
  int64_t sh = (o.size + pads[0] + pads[2] - dil[0] * (shape[0] - 1) - 1) / strides[0] + 1;
  int64_t sw = (o.size + pads[1] + pads[3] - dil[1] * (shape[1] - 1) - 1) / strides[1] + 1;
  std::string v = "conv1";
  auto bn = [&](const std::string& in) {
    b.random("bn_s", {M}, 0.2f, 1.0f);
    b.random("bn_b", {M}, 0.2f);
    b.random("bn_m", {M}, 0.1f);
    b.random("bn_v", {M}, 0.1f, 1.0f);
    return b.node("BatchNormalization", {in, "bn_s", "bn_b", "bn_m", "bn_v"}, "bn1").outputs[0];
  };
  if (o.mul_before_bn) {
    v = b.node("Mul", {v, mask}, "gate_mul").outputs[0];
    v = b.node("Relu", {bn(v)}, "relu1").outputs[0];
  } else {
    if (o.batchnorm) v = bn(v);
    v = b.node("Relu", {v}, "relu1").outputs[0];
    v = b.node("Mul", {v, mask}, "gate_mul").outputs[0];
  }
  if (o.add_after) v = b.node("Add", {v, v}, "add").outputs[0];
  if (o.maxpool) {
    frugal::Node& p = b.node("MaxPool", {v}, "pool");
    p.set_attr_ints("kernel_shape", {2, 2});
    p.set_attr_ints("strides", {2, 2});
    v = "pool";
    sh /= 2;
    sw /= 2;
  }
  int64_t channels = M;
  if (o.second_conv) {
    b.random("w2", {5, M, k, k}, 0.3f);
    b.random("b2", {5}, 0.1f);
    b.node("Conv", {v, "w2", "b2"}, "conv2").set_attr_ints("pads", {pad, pad, pad, pad});
    v = b.node("Relu", {"conv2"}, "relu2").outputs[0];
    channels = 5;
  }
  if (o.gemm_tail) {
    b.node("Flatten", {v}, "flat");
    b.random("w3", {4, channels * sh * sw}, 0.2f);
    b.random("b3", {4}, 0.1f);
    frugal::Node& gm = b.node("Gemm", {"flat", "w3", "b3"}, "y");
    gm.set_attr_int("transB", 1);
    v = "y";
  } else {
    b.node("Identity", {v}, "y");
  }
  b.g.outputs = {"y"};
  frugal::TensorDesc out;
  out.name = "y";
  b.g.tensors["y"] = out;
  return b.g;
}

int64_t nonzero_blocks(const std::vector<double>& values, size_t block) {
  int64_t count = 0;
  for (size_t b = 0; b < values.size() / block; ++b) {
    bool any = false;
    for (size_t k = 0; k < block; ++k) any = any || values[b * block + k] != 0.0;
    count += any;
  }
  return count;
}

}  // namespace gate_test
