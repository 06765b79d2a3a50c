#include "layer_facts.h"

#include <set>

#include "frugal/error.h"
#include "frugal/model/shape_inference.h"

namespace frugal::predictor {

namespace {

const std::set<std::string> kPools = {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool"};
const std::set<std::string> kElementwise = {"Add",
                                            "Mul",
                                            "Sub",
                                            "Div",
                                            "Sum",
                                            "Relu",
                                            "Clip",
                                            "LeakyRelu",
                                            "HardSigmoid",
                                            "HardSwish",
                                            "BatchNormalization",
                                            "Dropout",
                                            "Identity"};

// Element-wise ops built on exp or pow: ten or more times a Relu's time per
// element, a family of their own so a basis without them refuses them.
const std::set<std::string> kElementwiseExp = {"Sigmoid", "Tanh", "Softmax", "LRN"};

// A layer that bundles one of these after its head (a conv with SiLU:
// Sigmoid, Mul) pays an exp per output element that a conv with Relu does not:
// its family gets "+exp", so a basis without such layers refuses them.
bool bundles_exp(const nlohmann::json& ops) {
  for (size_t i = 1; i < ops.size(); ++i)
    if (ops[i].is_string() && kElementwiseExp.count(ops[i].get<std::string>())) return true;
  return false;
}

std::vector<int64_t> dims_of(const Graph& g, const std::string& tensor) {
  const TensorDesc& t = g.tensor(tensor);
  return t.has_shape && shape_is_known(t.shape) ? known_dims(t.shape) : std::vector<int64_t>{};
}

// [N, C, H, W] or [N, F]: channels, height, width (1 where absent).
void channels_and_size(const std::vector<int64_t>& d, int64_t& c, int64_t& h, int64_t& w) {
  c = d.size() > 1 ? d[1] : 1;
  h = d.size() > 2 ? d[2] : 1;
  w = d.size() > 3 ? d[3] : 1;
}

void read_window(const Node& n, LayerFacts& f) {
  const std::vector<int64_t> k = n.attr_ints("kernel_shape", {});
  const std::vector<int64_t> s = n.attr_ints("strides", {});
  if (k.size() == 2) f.kh = k[0], f.kw = k[1];
  if (s.size() == 2) f.sh = s[0], f.sw = s[1];
}

std::string family_of(const std::string& op, const LayerFacts& f) {
  if (op == "Conv") {
    if (f.groups > 1) return f.groups == f.m && f.n == f.m ? "conv_depthwise" : "conv_grouped";
    return f.kh * f.kw == 1 ? "conv_1x1" : "conv";
  }
  if (op == "Gemm" || op == "MatMul") return "gemm";
  if (kPools.count(op)) return "pool";
  if (kElementwise.count(op)) return "elementwise";
  if (kElementwiseExp.count(op)) return "elementwise_exp";
  if (op == "Concat") return "concat";
  if (op == "Flatten" || op == "Reshape") return "reshape";
  return "other:" + op;
}

void read_geometry(const Graph& g, const Node& n, LayerFacts& f) {
  channels_and_size(dims_of(g, n.inputs.at(0)), f.m, f.ih, f.iw);
  channels_and_size(dims_of(g, n.outputs.at(0)), f.n, f.oh, f.ow);
  if (n.op_type == "Conv" || n.op_type == "Gemm" || n.op_type == "MatMul") {
    if (n.inputs.size() > 1 && g.has_tensor(n.inputs[1])) f.weights = element_count(dims_of(g, n.inputs[1]));
    f.groups = n.attr_int("group", 1);
    if (n.op_type == "Conv") read_window(n, f);
  } else if (kPools.count(n.op_type)) {
    f.groups = f.m;
    if (n.op_type.rfind("Global", 0) == 0)
      f.kh = f.ih, f.kw = f.iw;
    else
      read_window(n, f);
  }
}

std::vector<double> numbers(const nlohmann::json& layer, const char* key, const std::string& who) {
  if (!layer.contains(key) || !layer[key].is_array())
    throw Error("cost table: layer '" + who + "' has no \"" + key + "\" list");
  return layer[key].get<std::vector<double>>();
}

double activity_of(const nlohmann::json& costs, const std::string& name) {
  if (!costs.contains("gate_activity")) return 1;
  const nlohmann::json& a = costs["gate_activity"];
  if (a.is_number()) return a.get<double>();
  if (a.is_object() && a.contains(name) && a[name].is_number()) return a[name].get<double>();
  return 1;
}

LayerFacts facts_of(const Graph& g, const nlohmann::json& costs, const nlohmann::json& layer) {
  LayerFacts f;
  f.name = layer.at("name").get<std::string>();
  if (!layer.contains("nodes") || !layer["nodes"].is_array() || layer["nodes"].empty() ||
      !layer.contains("ops") || !layer.contains("macs_per_sample"))
    throw Error(
        "cost table: layer '" + f.name +
        "' lacks the executor's facts (nodes, ops, macs_per_sample): make the table with this frugal");
  const std::string head = layer["nodes"][0].get<std::string>();
  const int index = g.node_index(head);
  if (index < 0) throw Error("cost table: layer '" + f.name + "': the model has no node '" + head + "'");
  const Node& n = g.nodes[size_t(index)];
  read_geometry(g, n, f);
  const std::string algorithm = layer.value("algorithm", std::string());
  f.kind = n.op_type + (algorithm.empty() ? "" : " (" + algorithm + ")");
  f.family = family_of(n.op_type, f) + (bundles_exp(layer["ops"]) ? "+exp" : "");
  f.macs_per_sample = layer["macs_per_sample"].get<double>();
  f.bundled = int(layer["nodes"].size()) - 1;
  f.gate_activity = activity_of(costs, f.name);
  f.threads = costs.contains("threads") && costs["threads"].is_number() ? costs["threads"].get<double>() : 1;
  f.in_bytes = numbers(layer, "in_bytes", f.name);
  f.out_bytes = numbers(layer, "out_bytes", f.name);
  f.ws_bytes = numbers(layer, "ws_bytes", f.name);
  return f;
}

}  // namespace

std::vector<LayerFacts> layer_facts(Graph g, const nlohmann::json& costs) {
  infer_shapes_for_batch(g, 1);
  std::vector<LayerFacts> out;
  for (const nlohmann::json& layer : costs.at("layers")) out.push_back(facts_of(g, costs, layer));
  return out;
}

}  // namespace frugal::predictor
