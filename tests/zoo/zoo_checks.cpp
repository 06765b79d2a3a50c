#include "zoo_checks.h"

#include <map>
#include <set>

namespace frugal::zoo_test {

int64_t expected_torchvision_params(const std::string& name) {
  // torchvision.models.<name>() parameter counts (sum of p.numel() over
  // parameters(): running statistics are buffers, not parameters). GoogLeNet
  // without aux heads; MobileNet v1 1.0/224 (no torchvision model) from the paper.
  static const std::map<std::string, int64_t> counts = {
      {"resnet18", 11689512},    {"resnet50", 25557032},     {"alexnet", 61100840},
      {"vgg16_bn", 138365992},   {"squeezenet1_0", 1248424}, {"squeezenet1_1", 1235496},
      {"mobilenet_v2", 3504872}, {"googlenet", 6624904},     {"efficientnet_b0", 5288548},
      {"mobilenet_v1", 4231976},
  };
  auto it = counts.find(name);
  return it == counts.end() ? 0 : it->second;
}

std::vector<std::string> structure_problems(const Graph& g) {
  static const std::set<std::string> ops = {"Conv",
                                            "BatchNormalization",
                                            "Relu",
                                            "Clip",
                                            "Sigmoid",
                                            "Mul",
                                            "Add",
                                            "Concat",
                                            "MaxPool",
                                            "AveragePool",
                                            "GlobalAveragePool",
                                            "LRN",
                                            "Gemm",
                                            "MatMul",
                                            "Flatten",
                                            "Reshape",
                                            "Softmax",
                                            "Dropout",
                                            "Identity"};
  std::vector<std::string> p;
  if (g.ir_version != 8) p.push_back("ir_version is " + std::to_string(g.ir_version));
  if (g.opsets.size() != 1 || !g.opsets[0].domain.empty() || g.opsets[0].version != 13)
    p.push_back("opset is not {'': 13}");

  std::set<std::string> defined;  // values available so far, in node order
  for (const auto& kv : g.tensors)
    if (kv.second.is_initializer) defined.insert(kv.first);
  if (g.inputs != std::vector<std::string>{"input"}) p.push_back("inputs are not exactly ['input']");
  defined.insert(g.inputs.begin(), g.inputs.end());

  std::set<std::string> node_names, read;
  for (const Node& n : g.nodes) {
    if (!ops.count(n.op_type))
      p.push_back("node '" + n.name + "' has op " + n.op_type + " outside the zoo op set");
    if (!n.domain.empty()) p.push_back("node '" + n.name + "' has domain '" + n.domain + "'");
    if (n.name.empty() || !node_names.insert(n.name).second)
      p.push_back("node name '" + n.name + "' empty or repeated");
    for (const std::string& in : n.inputs) {
      read.insert(in);
      if (!defined.count(in)) p.push_back("node '" + n.name + "' reads '" + in + "' before it is defined");
      if (!g.has_tensor(in)) p.push_back("node '" + n.name + "' reads '" + in + "', which has no TensorDesc");
    }
    for (const std::string& out : n.outputs) {
      if (!defined.insert(out).second) p.push_back("value '" + out + "' defined twice");
      if (!g.has_tensor(out))
        p.push_back("value '" + out + "' has no TensorDesc");
      else if (!g.tensor(out).has_shape)
        p.push_back("value '" + out + "' has no shape");
    }
  }
  for (const auto& kv : g.tensors)
    if (kv.second.is_initializer && !read.count(kv.first))
      p.push_back("initializer '" + kv.first + "' is never read");

  if (g.outputs != std::vector<std::string>{"output"}) {
    p.push_back("outputs are not exactly ['output']");
  } else if (!defined.count("output")) {
    p.push_back("'output' is never computed");
  }
  if (g.has_tensor("input")) {
    const Shape& s = g.tensor("input").shape;
    if (s.size() != 4 || s[0].is_known() || s[0].symbol != "N" || !s[1].is_known() || s[1].value != 3 ||
        !s[2].is_known() || !s[3].is_known())
      p.push_back("input shape is " + shape_to_string(s) + ", not [N, 3, H, W]");
  }
  if (g.has_tensor("output")) {
    const Shape& s = g.tensor("output").shape;
    if (s.size() != 2 || s[0].symbol != "N" || !s[1].is_known())
      p.push_back("output shape is " + shape_to_string(s));
  }
  return p;
}

}  // namespace frugal::zoo_test
