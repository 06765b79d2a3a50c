#include "zoo/zoo.h"

#include <functional>
#include <map>
#include <set>

#include "frugal/error.h"
#include "zoo/networks.h"

namespace frugal {

namespace {

using Builder = std::function<Graph(uint64_t)>;

const std::map<std::string, Builder>& registry() {
  static const std::map<std::string, Builder> r = {
      {"alexnet", zoo::build_alexnet},
      {"efficientnet_b0", zoo::build_efficientnet_b0},
      {"googlenet", zoo::build_googlenet},
      {"mobilenet_v1", zoo::build_mobilenet_v1},
      {"mobilenet_v2", zoo::build_mobilenet_v2},
      {"resnet18", zoo::build_resnet18},
      {"resnet50", zoo::build_resnet50},
      {"squeezenet1_0", zoo::build_squeezenet1_0},
      {"squeezenet1_1", zoo::build_squeezenet1_1},
      {"toy_allops", zoo::build_toy_allops},
      {"toy_branched", zoo::build_toy_branched},
      {"toy_linear", zoo::build_toy_linear},
      {"toy_tiny", zoo::build_toy_tiny},
      {"vgg16_bn", zoo::build_vgg16_bn},
  };
  return r;
}

const std::map<std::string, Builder>& training_registry() {
  static const std::map<std::string, Builder> r = {
      {"gemm_ladder", zoo::build_gemm_ladder},
      {"mobilenet_v2_silu", zoo::build_mobilenet_v2_silu},
  };
  return r;
}

}  // namespace

std::vector<std::string> zoo_names() {
  std::vector<std::string> names;
  for (const auto& kv : registry()) names.push_back(kv.first);  // std::map: already sorted
  return names;
}

std::vector<std::string> zoo_training_names() {
  std::vector<std::string> names;
  for (const auto& kv : training_registry()) names.push_back(kv.first);
  return names;
}

Graph build_zoo_model(const std::string& name, uint64_t seed) {
  for (const auto* r : {&registry(), &training_registry()}) {
    auto it = r->find(name);
    if (it != r->end()) return it->second(seed);
  }
  std::string msg = "unknown zoo model '" + name + "'; valid names:";
  for (const std::string& n : zoo_names()) msg += " " + n;
  msg += "; training networks of the predictor:";
  for (const std::string& n : zoo_training_names()) msg += " " + n;
  throw Error(msg);
}

int64_t torchvision_parameter_count(const Graph& g) {
  // Constant operands that torchvision does not count as parameters.
  std::set<std::string> excluded;
  for (const Node& n : g.nodes) {
    if (n.op_type == "BatchNormalization") {
      for (size_t i = 3; i < n.inputs.size(); ++i) excluded.insert(n.inputs[i]);  // running mean, var
    } else if (n.op_type == "Clip") {
      for (size_t i = 1; i < n.inputs.size(); ++i) excluded.insert(n.inputs[i]);  // bounds
    }
  }
  int64_t count = 0;
  for (const auto& kv : g.tensors) {
    const TensorDesc& t = kv.second;
    if (!t.is_initializer || excluded.count(kv.first)) continue;
    if (t.dtype != DType::Float32 && t.dtype != DType::Float64 && t.dtype != DType::Float16) continue;
    count += static_cast<int64_t>(t.data.size() / dtype_size(t.dtype));
  }
  return count;
}

}  // namespace frugal
