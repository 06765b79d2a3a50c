#include "zoo/prune_channels.h"

#include <cmath>
#include <cstring>
#include <set>

#include "frugal/error.h"

namespace frugal {

namespace {

const std::set<std::string> kPerChannel = {"BatchNormalization", "Relu",    "Clip",    "LeakyRelu", "MaxPool",
                                           "AveragePool",        "Dropout", "Identity"};

// What a pruned conv's channels pass through, and where they end.
struct Chain {
  std::vector<int> per_channel, depthwise, readers;  // node indices
  std::vector<std::string> values;                   // every value carrying the channels
};

int64_t out_channels(const Graph& g, const Node& conv) {
  return g.tensor(conv.inputs.at(1)).shape.at(0).value;
}

bool follow(const Graph& g, const std::string& value, int64_t channels, Chain& c) {
  for (const std::string& o : g.outputs)
    if (o == value) return false;
  c.values.push_back(value);
  for (int u : g.consumers(value)) {
    const Node& n = g.nodes[size_t(u)];
    if (n.inputs.at(0) != value) return false;
    const int64_t group = n.op_type == "Conv" ? n.attr_int("group", 1) : 0;
    if (kPerChannel.count(n.op_type)) {
      c.per_channel.push_back(u);
      if (!follow(g, n.outputs.at(0), channels, c)) return false;
    } else if (n.op_type == "Conv" && group == channels && out_channels(g, n) == channels) {
      c.depthwise.push_back(u);
      if (!follow(g, n.outputs.at(0), channels, c)) return false;
    } else if (n.op_type == "Conv" && group == 1) {
      c.readers.push_back(u);
    } else {
      return false;
    }
  }
  return true;
}

// Keeps `keep` of the `rows` blocks of a float tensor's dim `axis` (0 or 1).
void slice(Graph& g, const std::string& name, int axis, int64_t keep) {
  TensorDesc& t = g.tensor(name);
  if (t.dtype != DType::Float32) throw Error("prune: '" + name + "' is not float32");
  std::vector<int64_t> d = known_dims(t.shape);
  const int64_t outer = axis == 0 ? 1 : d[0], rows = d[size_t(axis)];
  const int64_t inner = element_count(d) / outer / rows;
  std::vector<uint8_t> out;
  for (int64_t o = 0; o < outer; ++o) {
    const uint8_t* src = t.data.data() + size_t(o * rows * inner) * 4;
    out.insert(out.end(), src, src + size_t(keep * inner) * 4);
  }
  d[size_t(axis)] = keep;
  t.data = out;
  t.shape = make_shape(d);
}

void slice_node_params(Graph& g, const Node& n, int64_t keep) {
  if (n.op_type == "Conv") {
    slice(g, n.inputs[1], 0, keep);
    if (n.inputs.size() > 2 && !n.inputs[2].empty()) slice(g, n.inputs[2], 0, keep);
  } else if (n.op_type == "BatchNormalization") {
    for (size_t i = 1; i < 5 && i < n.inputs.size(); ++i) slice(g, n.inputs[i], 0, keep);
  }
}

void apply(Graph& g, int conv, const Chain& c, int64_t keep) {
  slice_node_params(g, g.nodes[size_t(conv)], keep);
  for (int u : c.per_channel) slice_node_params(g, g.nodes[size_t(u)], keep);
  for (int u : c.depthwise) {
    slice_node_params(g, g.nodes[size_t(u)], keep);
    g.nodes[size_t(u)].set_attr_int("group", keep);
  }
  for (int u : c.readers) slice(g, g.nodes[size_t(u)].inputs[1], 1, keep);
  for (const std::string& v : c.values) {
    TensorDesc& t = g.tensor(v);
    if (t.has_shape && t.shape.size() > 1) t.shape[1] = Dim{keep, ""};
  }
}

}  // namespace

Graph prune_channels(const Graph& g, double share) {
  if (!(share >= 0 && share < 1)) throw Error("prune: the share of channels to drop must be in [0, 1)");
  Graph out = g;
  for (size_t i = 0; i < out.nodes.size(); ++i) {
    const Node& n = out.nodes[i];
    if (n.op_type != "Conv" || n.attr_int("group", 1) != 1 || !out.is_initializer(n.inputs.at(1))) continue;
    const int64_t channels = out_channels(out, n);
    const int64_t keep = std::max<int64_t>(1, std::llround(double(channels) * (1 - share)));
    Chain c;
    if (keep < channels && follow(out, n.outputs.at(0), channels, c)) apply(out, int(i), c, keep);
  }
  return out;
}

}  // namespace frugal
