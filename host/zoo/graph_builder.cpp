#include "zoo/graph_builder.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "frugal/error.h"
#include "zoo/random_weights.h"

namespace frugal::zoo {

namespace {

constexpr int64_t kBatch = -1;  // the symbolic batch dimension "N"

std::string dims_string(const std::vector<int64_t>& d) {
  std::string s = "[";
  for (size_t i = 0; i < d.size(); ++i) {
    if (i) s += ", ";
    s += d[i] == kBatch ? "N" : std::to_string(d[i]);
  }
  return s + "]";
}

Attribute ints_attr(const std::string& name, std::vector<int64_t> v) {
  Attribute a;
  a.name = name;
  a.kind = Attribute::Kind::Ints;
  a.ints = std::move(v);
  return a;
}

Attribute int_attr(const std::string& name, int64_t v) {
  Attribute a;
  a.name = name;
  a.kind = Attribute::Kind::Int;
  a.i = v;
  return a;
}

Attribute float_attr(const std::string& name, double v) {
  Attribute a;
  a.name = name;
  a.kind = Attribute::Kind::Float;
  a.f = static_cast<float>(v);
  return a;
}

}  // namespace

GraphBuilder::GraphBuilder(std::string graph_name, uint64_t seed) : seed_(seed) {
  g_.name = std::move(graph_name);
  g_.producer_name = "frugal-zoo";
}

std::string GraphBuilder::input(int64_t channels, int64_t height, int64_t width) {
  if (!g_.inputs.empty()) throw Error("zoo model '" + g_.name + "': input declared twice");
  std::string x = define_value("input", {kBatch, channels, height, width}, {0.0, 1.0});  // normalised images
  g_.inputs.push_back(x);
  return x;
}

std::string GraphBuilder::define_value(const std::string& name, std::vector<int64_t> dims, Moments m) {
  if (shapes_.count(name) || g_.has_tensor(name))
    throw Error("zoo model '" + g_.name + "': value '" + name + "' defined twice");
  for (int64_t d : dims)
    if (d == 0 || d < kBatch)
      throw Error("zoo model '" + g_.name + "': value '" + name + "' would have shape " + dims_string(dims));
  TensorDesc t;
  t.name = name;
  t.dtype = DType::Float32;
  t.has_shape = true;
  for (int64_t d : dims) t.shape.push_back(d == kBatch ? Dim{-1, "N"} : Dim{d, ""});
  g_.tensors[name] = std::move(t);
  shapes_[name] = std::move(dims);
  moments_[name] = m;
  return name;
}

Node& GraphBuilder::add_node(const std::string& op, const std::string& name,
                             std::vector<std::string> inputs) {
  for (const std::string& in : inputs)
    if (!g_.has_tensor(in))
      throw Error("zoo model '" + g_.name + "': node '" + name + "' reads undefined value '" + in + "'");
  Node n;
  n.name = name;
  n.op_type = op;
  n.inputs = std::move(inputs);
  n.outputs = {name};
  g_.nodes.push_back(std::move(n));
  return g_.nodes.back();
}

void GraphBuilder::add_float(const std::string& name, const std::vector<int64_t>& dims,
                             const std::vector<float>& values) {
  if (g_.has_tensor(name))
    throw Error("zoo model '" + g_.name + "': initializer '" + name + "' defined twice");
  g_.add_initializer(name, DType::Float32, dims, values.data());
}

void GraphBuilder::add_random(const std::string& name, const std::vector<int64_t>& dims, double stddev) {
  if (g_.has_tensor(name))
    throw Error("zoo model '" + g_.name + "': initializer '" + name + "' defined twice");
  TensorDesc& t = g_.add_initializer(name, DType::Float32, dims, nullptr);
  SplitMix64 rng = tensor_stream(seed_, name);
  fill_normalish(rng, t.f32(), static_cast<size_t>(element_count(dims)), stddev);
}

void GraphBuilder::require_rank(const std::string& x, size_t rank, const std::string& name) const {
  if (shape(x).size() != rank)
    throw Error("zoo model '" + g_.name + "': node '" + name + "' needs a rank-" + std::to_string(rank) +
                " input, '" + x + "' is " + dims_string(shape(x)));
}

const std::vector<int64_t>& GraphBuilder::shape(const std::string& x) const {
  auto it = shapes_.find(x);
  if (it == shapes_.end()) throw Error("zoo model '" + g_.name + "': no value named '" + x + "'");
  return it->second;
}

const Moments& GraphBuilder::moments(const std::string& x) const {
  auto it = moments_.find(x);
  if (it == moments_.end()) throw Error("zoo model '" + g_.name + "': no value named '" + x + "'");
  return it->second;
}

int64_t GraphBuilder::channels(const std::string& x) const {
  const auto& s = shape(x);
  if (s.size() < 2) throw Error("zoo model '" + g_.name + "': value '" + x + "' has no channel dimension");
  return s[1];
}

std::string GraphBuilder::conv(const std::string& x, const std::string& name, int64_t out_channels,
                               int64_t kernel, const ConvOptions& o) {
  require_rank(x, 4, name);
  const std::vector<int64_t> in = shape(x);
  const int64_t cin = in[1];
  if (o.groups < 1 || cin % o.groups || out_channels % o.groups)
    throw Error("zoo model '" + g_.name + "': conv '" + name + "' has groups=" + std::to_string(o.groups) +
                " not dividing " + std::to_string(cin) + " -> " + std::to_string(out_channels) + " channels");
  const int64_t fan_in = cin / o.groups * kernel * kernel;
  // E[y^2] = fan_in * Var(w) * E[x^2] = 1 for zero-mean weights (ignoring padding).
  const double fan_m2 = static_cast<double>(fan_in) * moments(x).mean_square;
  add_random(name + ".weight", {out_channels, cin / o.groups, kernel, kernel}, std::sqrt(1.0 / fan_m2));
  double out_m2 = 1.0;
  std::vector<std::string> inputs{x, name + ".weight"};
  if (o.bias) {
    // PyTorch's default bias init: U(-1/sqrt(fan_in), 1/sqrt(fan_in)).
    SplitMix64 brng = tensor_stream(seed_, name + ".bias");
    const double bound = 1.0 / std::sqrt(static_cast<double>(fan_in));
    std::vector<float> b(static_cast<size_t>(out_channels));
    for (float& v : b) v = static_cast<float>(brng.uniform(-bound, bound));
    add_float(name + ".bias", {out_channels}, b);
    inputs.push_back(name + ".bias");
    out_m2 += bound * bound / 3.0;
  }
  Node& n = add_node("Conv", name, inputs);
  n.attributes = {int_attr("group", o.groups), ints_attr("kernel_shape", {kernel, kernel}),
                  ints_attr("pads", {o.pad, o.pad, o.pad, o.pad}), ints_attr("strides", {o.stride, o.stride}),
                  ints_attr("dilations", {o.dilation, o.dilation})};
  auto out_size = [&](int64_t s) { return (s + 2 * o.pad - o.dilation * (kernel - 1) - 1) / o.stride + 1; };
  return define_value(name, {in[0], out_channels, out_size(in[2]), out_size(in[3])}, {0.0, out_m2});
}

std::string GraphBuilder::bn(const std::string& x, const std::string& name, double epsilon) {
  const int64_t c = channels(x);
  const size_t n = static_cast<size_t>(c);
  std::vector<float> gamma(n), beta(n), mean(n), var(n);
  SplitMix64 rng = tensor_stream(seed_, name + ".weight");
  for (float& v : gamma) v = static_cast<float>(rng.normal(1.0, 0.1));
  // Negate a few channels (about 7%, at least one): folding must handle sign flips.
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  const size_t negatives =
      std::max<size_t>(1, static_cast<size_t>(std::lround(0.07 * static_cast<double>(n))));
  for (size_t i = 0; i < negatives; ++i) {
    const size_t j = i + static_cast<size_t>(rng.next() % (n - i));
    std::swap(order[i], order[j]);
    gamma[order[i]] = -gamma[order[i]];
  }
  SplitMix64 rb = tensor_stream(seed_, name + ".bias");
  for (float& v : beta) v = static_cast<float>(rb.normal(0.0, 0.1));
  SplitMix64 rm = tensor_stream(seed_, name + ".running_mean");
  for (float& v : mean) v = static_cast<float>(rm.normal(0.0, 0.1));
  SplitMix64 rv = tensor_stream(seed_, name + ".running_var");
  for (float& v : var) v = static_cast<float>(std::exp(rv.uniform(std::log(0.5), std::log(2.0))));
  add_float(name + ".weight", {c}, gamma);
  add_float(name + ".bias", {c}, beta);
  add_float(name + ".running_mean", {c}, mean);
  add_float(name + ".running_var", {c}, var);
  Node& node = add_node("BatchNormalization", name,
                        {x, name + ".weight", name + ".bias", name + ".running_mean", name + ".running_var"});
  node.attributes = {float_attr("epsilon", epsilon), float_attr("momentum", 0.9)};
  // Per channel y = a x + c with a = gamma / sqrt(var + eps), c = beta - a mean;
  // average E[y] and E[y^2] over channels.
  const Moments in_m = moments(x);
  Moments out_m{0.0, 0.0};
  for (size_t i = 0; i < n; ++i) {
    const double a = gamma[i] / std::sqrt(double(var[i]) + epsilon), c = beta[i] - a * mean[i];
    out_m.mean += a * in_m.mean + c;
    out_m.mean_square += a * a * in_m.mean_square + 2.0 * a * c * in_m.mean + c * c;
  }
  out_m.mean /= static_cast<double>(n);
  out_m.mean_square /= static_cast<double>(n);
  return define_value(name, shape(x), out_m);
}

std::string GraphBuilder::elementwise(const std::string& op, const std::string& x, const std::string& name,
                                      Moments m) {
  add_node(op, name, {x});
  return define_value(name, shape(x), m);
}

std::string GraphBuilder::relu(const std::string& x, const std::string& name) {
  return elementwise("Relu", x, name, relu_moments(moments(x)));
}
std::string GraphBuilder::sigmoid(const std::string& x, const std::string& name) {
  return elementwise("Sigmoid", x, name, sigmoid_moments(moments(x)));
}
std::string GraphBuilder::dropout(const std::string& x, const std::string& name) {
  return elementwise("Dropout", x, name, moments(x));
}
std::string GraphBuilder::identity(const std::string& x, const std::string& name) {
  return elementwise("Identity", x, name, moments(x));
}

std::string GraphBuilder::relu6(const std::string& x, const std::string& name) {
  // One pair of scalar bounds shared by every ReLU6 of the network.
  if (!g_.has_tensor("relu6.min")) {
    add_float("relu6.min", {}, {0.0f});
    add_float("relu6.max", {}, {6.0f});
  }
  add_node("Clip", name, {x, "relu6.min", "relu6.max"});
  return define_value(name, shape(x), relu6_moments(moments(x)));
}

std::string GraphBuilder::silu(const std::string& x, const std::string& name) {
  std::string s = sigmoid(x, name + ".sigmoid");
  std::string y = mul(x, s, name);
  moments_[y] = silu_moments(moments(x));  // x and Sigmoid(x) are not independent
  return y;
}

std::string GraphBuilder::binary(const std::string& op, const std::string& a, const std::string& b,
                                 const std::string& name) {
  // Numpy broadcasting, right-aligned.
  std::vector<int64_t> sa = shape(a), sb = shape(b);
  const size_t rank = std::max(sa.size(), sb.size());
  sa.insert(sa.begin(), rank - sa.size(), 1);
  sb.insert(sb.begin(), rank - sb.size(), 1);
  std::vector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    if (sa[i] == sb[i] || sb[i] == 1)
      out[i] = sa[i];
    else if (sa[i] == 1)
      out[i] = sb[i];
    else
      throw Error("zoo model '" + g_.name + "': " + op + " '" + name + "' cannot broadcast " +
                  dims_string(shape(a)) + " with " + dims_string(shape(b)));
  }
  add_node(op, name, {a, b});
  return define_value(
      name, out, op == "Add" ? add_moments(moments(a), moments(b)) : mul_moments(moments(a), moments(b)));
}

std::string GraphBuilder::add(const std::string& a, const std::string& b, const std::string& name) {
  return binary("Add", a, b, name);
}
std::string GraphBuilder::mul(const std::string& a, const std::string& b, const std::string& name) {
  return binary("Mul", a, b, name);
}

std::string GraphBuilder::concat(const std::vector<std::string>& xs, const std::string& name) {
  if (xs.empty()) throw Error("zoo model '" + g_.name + "': concat '" + name + "' has no inputs");
  std::vector<int64_t> out = shape(xs[0]);
  for (size_t i = 1; i < xs.size(); ++i) {
    const auto& s = shape(xs[i]);
    if (s.size() != out.size()) throw Error("zoo model '" + g_.name + "': concat '" + name + "' mixes ranks");
    for (size_t d = 0; d < s.size(); ++d)
      if (d != 1 && s[d] != out[d])
        throw Error("zoo model '" + g_.name + "': concat '" + name + "' input '" + xs[i] + "' is " +
                    dims_string(s) + ", expected " + dims_string(out) + " outside the channel axis");
    out[1] += s[1];
  }
  Node& n = add_node("Concat", name, xs);
  n.attributes = {int_attr("axis", 1)};
  Moments m{0.0, 0.0};
  for (const std::string& x : xs) {
    const double share = static_cast<double>(shape(x)[1]) / static_cast<double>(out[1]);
    m.mean += share * moments(x).mean;
    m.mean_square += share * moments(x).mean_square;
  }
  return define_value(name, out, m);
}

std::string GraphBuilder::pool(const std::string& op, const std::string& x, const std::string& name,
                               int64_t kernel, int64_t stride, int64_t pad, bool ceil_mode) {
  require_rank(x, 4, name);
  const std::vector<int64_t> in = shape(x);
  auto out_size = [&](int64_t s) {
    const int64_t span = s + 2 * pad - kernel;
    int64_t o = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
    // PyTorch and ONNX disagree on a last window that starts in the right padding;
    // zoo networks never build one, so the graph means the same to both.
    if (ceil_mode && (o - 1) * stride >= s + pad)
      throw Error("zoo model '" + g_.name + "': pool '" + name +
                  "' has a ceil-mode window starting in the padding");
    return o;
  };
  Node& n = add_node(op, name, {x});
  n.attributes = {ints_attr("kernel_shape", {kernel, kernel}), ints_attr("pads", {pad, pad, pad, pad}),
                  ints_attr("strides", {stride, stride})};
  if (ceil_mode) n.attributes.push_back(int_attr("ceil_mode", 1));
  return define_value(name, {in[0], in[1], out_size(in[2]), out_size(in[3])}, moments(x));
}

std::string GraphBuilder::maxpool(const std::string& x, const std::string& name, int64_t kernel,
                                  int64_t stride, int64_t pad, bool ceil_mode) {
  return pool("MaxPool", x, name, kernel, stride, pad, ceil_mode);
}

std::string GraphBuilder::avgpool(const std::string& x, const std::string& name, int64_t kernel,
                                  int64_t stride, int64_t pad, bool count_include_pad) {
  std::string y = pool("AveragePool", x, name, kernel, stride, pad, false);
  g_.nodes.back().attributes.push_back(int_attr("count_include_pad", count_include_pad ? 1 : 0));
  return y;
}

std::string GraphBuilder::global_avgpool(const std::string& x, const std::string& name) {
  require_rank(x, 4, name);
  const std::vector<int64_t> in = shape(x);
  add_node("GlobalAveragePool", name, {x});
  return define_value(name, {in[0], in[1], 1, 1}, moments(x));
}

std::string GraphBuilder::lrn(const std::string& x, const std::string& name, int64_t size, double alpha,
                              double beta, double bias) {
  require_rank(x, 4, name);
  Node& n = add_node("LRN", name, {x});
  n.attributes = {float_attr("alpha", alpha), float_attr("beta", beta), float_attr("bias", bias),
                  int_attr("size", size)};
  return define_value(name, shape(x), moments(x));
}

std::string GraphBuilder::flatten(const std::string& x, const std::string& name) {
  const std::vector<int64_t> in = shape(x);
  int64_t rest = 1;
  for (size_t i = 1; i < in.size(); ++i) rest *= in[i];
  Node& n = add_node("Flatten", name, {x});
  n.attributes = {int_attr("axis", 1)};
  return define_value(name, {in.empty() ? 1 : in[0], rest}, moments(x));
}

std::string GraphBuilder::gemm(const std::string& x, const std::string& name, int64_t out_features) {
  require_rank(x, 2, name);
  const int64_t in_features = shape(x)[1];
  add_random(name + ".weight", {out_features, in_features},
             std::sqrt(1.0 / (static_cast<double>(in_features) * moments(x).mean_square)));
  SplitMix64 brng = tensor_stream(seed_, name + ".bias");
  const double bound = 1.0 / std::sqrt(static_cast<double>(in_features));
  std::vector<float> b(static_cast<size_t>(out_features));
  for (float& v : b) v = static_cast<float>(brng.uniform(-bound, bound));
  add_float(name + ".bias", {out_features}, b);
  Node& n = add_node("Gemm", name, {x, name + ".weight", name + ".bias"});
  n.attributes = {float_attr("alpha", 1.0), float_attr("beta", 1.0), int_attr("transB", 1)};
  return define_value(name, {shape(x)[0], out_features}, {0.0, 1.0 + bound * bound / 3.0});
}

std::string GraphBuilder::matmul(const std::string& x, const std::string& name, int64_t out_features) {
  std::vector<int64_t> out = shape(x);
  if (out.empty()) throw Error("zoo model '" + g_.name + "': matmul '" + name + "' needs a non-scalar input");
  const int64_t in_features = out.back();
  add_random(name + ".weight", {in_features, out_features},
             std::sqrt(1.0 / (static_cast<double>(in_features) * moments(x).mean_square)));
  add_node("MatMul", name, {x, name + ".weight"});
  out.back() = out_features;
  return define_value(name, out, {0.0, 1.0});
}

std::string GraphBuilder::reshape(const std::string& x, const std::string& name,
                                  const std::vector<int64_t>& target) {
  const std::vector<int64_t> in = shape(x);
  std::vector<int64_t> out(target.size());
  int64_t known = 1, infer_at = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == 0) {
      if (i >= in.size())
        throw Error("zoo model '" + g_.name + "': reshape '" + name + "' copies a missing dim");
      out[i] = in[i];
    } else if (target[i] == -1) {
      infer_at = static_cast<int64_t>(i);
      continue;
    } else {
      out[i] = target[i];
    }
    if (out[i] != kBatch) known *= out[i];
  }
  int64_t total = 1;
  bool batch_in = false, batch_out = false;
  for (int64_t d : in) {
    if (d == kBatch)
      batch_in = true;
    else
      total *= d;
  }
  for (int64_t d : out) batch_out = batch_out || d == kBatch;
  if (batch_in != batch_out)
    throw Error("zoo model '" + g_.name + "': reshape '" + name + "' must keep the batch dim (use 0 for it)");
  if (infer_at >= 0) out[static_cast<size_t>(infer_at)] = total / known;
  int64_t check = 1;
  for (int64_t d : out) check *= d == kBatch ? 1 : d;
  if (check != total)
    throw Error("zoo model '" + g_.name + "': reshape '" + name + "' cannot reshape " + dims_string(in) +
                " to " + dims_string(target));
  g_.add_initializer(name + ".shape", DType::Int64, {static_cast<int64_t>(target.size())}, target.data());
  add_node("Reshape", name, {x, name + ".shape"});
  return define_value(name, out, moments(x));
}

std::string GraphBuilder::softmax(const std::string& x, const std::string& name, int64_t axis) {
  const std::vector<int64_t> s = shape(x);
  const int64_t rank = static_cast<int64_t>(s.size()), a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank || s[static_cast<size_t>(a)] == kBatch)
    throw Error("zoo model '" + g_.name + "': softmax '" + name + "' axis " + std::to_string(axis) +
                " is not valid for " + dims_string(s));
  Node& n = add_node("Softmax", name, {x});
  n.attributes = {int_attr("axis", axis)};
  const int64_t len = s[static_cast<size_t>(a)];
  const double p = 1.0 / static_cast<double>(len);  // about uniform probabilities
  return define_value(name, s, {p, p * p});
}

Graph GraphBuilder::finish(const std::string& x) {
  const std::string out = "output";
  if (x != out) {
    if (g_.has_tensor(out)) throw Error("zoo model '" + g_.name + "': a value is already named 'output'");
    for (Node& n : g_.nodes) {
      for (std::string& o : n.outputs)
        if (o == x) o = out;
      for (std::string& i : n.inputs)
        if (i == x) i = out;
    }
    TensorDesc t = g_.tensor(x);
    t.name = out;
    g_.tensors.erase(x);
    g_.tensors[out] = std::move(t);
    shapes_[out] = shapes_[x];
    shapes_.erase(x);
    moments_[out] = moments_[x];
    moments_.erase(x);
  }
  g_.outputs = {out};
  g_.topological_sort();  // throws if anything is undefined or cyclic
  return std::move(g_);
}

}  // namespace frugal::zoo
