// The zoo's networks: names, torchvision parameter counts, graph structure,
// determinism and BatchNorm statistics. vgg16_bn (138M weights) is checked in
// test_zoo_slow instead.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <set>

#include "frugal/error.h"
#include "zoo/zoo.h"
#include "zoo_checks.h"

using namespace frugal;

namespace {

std::vector<std::string> unit_sized_models() {
  std::vector<std::string> names = zoo_names();
  names.erase(std::remove(names.begin(), names.end(), "vgg16_bn"), names.end());
  return names;
}

bool is_toy(const std::string& name) { return name.rfind("toy_", 0) == 0; }

}  // namespace

TEST_CASE("zoo lists every network once, sorted", "[zoo]") {
  const std::vector<std::string> names = zoo_names();
  CHECK(std::is_sorted(names.begin(), names.end()));
  CHECK(std::adjacent_find(names.begin(), names.end()) == names.end());
  for (const char* n :
       {"resnet18", "resnet50", "googlenet", "squeezenet1_0", "squeezenet1_1", "mobilenet_v1", "mobilenet_v2",
        "vgg16_bn", "alexnet", "efficientnet_b0", "toy_linear", "toy_branched", "toy_tiny", "toy_allops"})
    CHECK(std::count(names.begin(), names.end(), n) == 1);
}

TEST_CASE("unknown zoo names are refused with the list of valid names", "[zoo]") {
  CHECK_THROWS_AS(build_zoo_model("resnet19"), Error);
  CHECK_THROWS_WITH(build_zoo_model("resnet19"), Catch::Contains("resnet19") && Catch::Contains("resnet18") &&
                                                     Catch::Contains("toy_tiny") &&
                                                     Catch::Contains("vgg16_bn"));
}

TEST_CASE("zoo parameter counts equal torchvision's", "[zoo]") {
  for (const std::string& name : unit_sized_models()) {
    if (is_toy(name)) continue;
    INFO(name);
    const Graph g = build_zoo_model(name);
    CHECK(torchvision_parameter_count(g) == zoo_test::expected_torchvision_params(name));
  }
}

TEST_CASE("torchvision_parameter_count leaves out BN running statistics and Clip bounds", "[zoo]") {
  // Brute force over the graph: every float initializer, minus BN inputs 3 and 4
  // and Clip inputs 1 and 2, counted by element.
  for (const char* name : {"mobilenet_v2", "toy_allops", "resnet18"}) {
    INFO(name);
    const Graph g = build_zoo_model(name);
    int64_t all = 0, stats = 0, bounds = 0;
    for (const auto& kv : g.tensors)
      if (kv.second.is_initializer && kv.second.dtype == DType::Float32)
        all += static_cast<int64_t>(kv.second.data.size() / 4);
    std::set<std::string> clip_bounds;
    for (const Node& n : g.nodes) {
      if (n.op_type == "BatchNormalization")
        stats += 2 * element_count(known_dims(g.tensor(n.inputs[3]).shape));
      if (n.op_type == "Clip") clip_bounds.insert(n.inputs.begin() + 1, n.inputs.end());
    }
    for (const std::string& b : clip_bounds) bounds += element_count(known_dims(g.tensor(b).shape));
    CHECK(torchvision_parameter_count(g) == all - stats - bounds);
    CHECK(g.parameter_count() == all);
  }
}

TEST_CASE("zoo graphs are well formed", "[zoo]") {
  for (const std::string& name : unit_sized_models()) {
    INFO(name);
    const Graph g = build_zoo_model(name);
    const std::vector<std::string> problems = zoo_test::structure_problems(g);
    for (const std::string& p : problems) UNSCOPED_INFO(p);
    CHECK(problems.empty());
    CHECK(g.name == name);
    if (!is_toy(name)) {
      CHECK(shape_to_string(g.tensor("input").shape) == "[N, 3, 224, 224]");
      CHECK(shape_to_string(g.tensor("output").shape) == "[N, 1000]");
    }
    // Graph::topological_sort keeps an already sorted graph unchanged.
    Graph sorted = g;
    sorted.topological_sort();
    for (size_t i = 0; i < g.nodes.size(); ++i) CHECK(sorted.nodes[i].name == g.nodes[i].name);
  }
}

TEST_CASE("the predictor's training networks: buildable by name, not in the zoo's list", "[zoo]") {
  const std::vector<std::string> training = zoo_training_names();
  CHECK(training == std::vector<std::string>{"gemm_ladder", "mobilenet_v2_silu"});
  const std::vector<std::string> zoo = zoo_names();
  for (const std::string& n : training) CHECK(std::count(zoo.begin(), zoo.end(), n) == 0);
  CHECK_THROWS_WITH(build_zoo_model("resnet19"),
                    Catch::Contains("training networks of the predictor: gemm_ladder"));

  // gemm_ladder: 3072 -> 512 -> 256 -> 3584 -> 2560 -> 7168 -> 6144 -> 1000, weights and biases.
  const Graph ladder = build_zoo_model("gemm_ladder");
  const std::vector<std::string> problems = zoo_test::structure_problems(ladder);
  for (const std::string& p : problems) UNSCOPED_INFO(p);
  CHECK(problems.empty());
  CHECK(ladder.name == "gemm_ladder");
  CHECK(shape_to_string(ladder.tensor("input").shape) == "[N, 3, 32, 32]");
  CHECK(shape_to_string(ladder.tensor("output").shape) == "[N, 1000]");
  const int64_t widths[] = {3072, 512, 256, 3584, 2560, 7168, 6144, 1000};
  int64_t params = 0;
  for (int i = 0; i < 7; ++i) {
    INFO("fc." << i);
    CHECK(shape_to_string(ladder.tensor("fc." + std::to_string(i) + ".weight").shape) ==
          "[" + std::to_string(widths[i + 1]) + ", " + std::to_string(widths[i]) + "]");
    params += widths[i] * widths[i + 1] + widths[i + 1];
  }
  CHECK(params == 80351976);
  CHECK(torchvision_parameter_count(ladder) == params);
  CHECK(ladder.tensor("fc.5.weight").data.size() == size_t(7168 * 6144 * 4));  // 176 MB: streamed from memory

  // mobilenet_v2_silu: mobilenet_v2's weights, each ReLU6 (Clip) a SiLU (Sigmoid and Mul).
  const Graph relu6 = build_zoo_model("mobilenet_v2"), silu = build_zoo_model("mobilenet_v2_silu");
  CHECK(silu.name == "mobilenet_v2_silu");
  CHECK(zoo_test::structure_problems(silu).empty());
  CHECK(torchvision_parameter_count(silu) == 3504872);
  const auto count = [](const Graph& g, const char* op) {
    return std::count_if(g.nodes.begin(), g.nodes.end(), [&](const Node& n) { return n.op_type == op; });
  };
  CHECK(count(relu6, "Clip") == 35);
  CHECK(count(silu, "Clip") == 0);
  CHECK(count(silu, "Sigmoid") == 35);
  CHECK(count(silu, "Mul") == 35);
  CHECK(count(silu, "Conv") == count(relu6, "Conv"));
}

TEST_CASE("zoo names follow torchvision's state_dict", "[zoo]") {
  const Graph r = build_zoo_model("resnet50");
  for (const char* t : {"conv1.weight", "bn1.running_var", "layer1.0.downsample.0.weight",
                        "layer4.2.bn3.bias", "fc.weight", "fc.bias"})
    CHECK(r.is_initializer(t));
  CHECK(r.node_index("layer3.5.conv2") >= 0);
  const Graph m = build_zoo_model("mobilenet_v2");
  for (const char* t : {"features.0.0.weight", "features.1.conv.0.0.weight", "features.1.conv.1.weight",
                        "features.2.conv.3.running_mean", "features.18.1.weight", "classifier.1.weight"})
    CHECK(m.is_initializer(t));
  const Graph e = build_zoo_model("efficientnet_b0");
  for (const char* t : {"features.1.0.block.1.fc1.weight", "features.2.0.block.3.1.running_var",
                        "features.8.0.weight", "classifier.1.bias"})
    CHECK(e.is_initializer(t));
  const Graph gn = build_zoo_model("googlenet");
  for (const char* t : {"inception3a.branch3.1.conv.weight", "inception5b.branch4.1.bn.weight", "fc.weight"})
    CHECK(gn.is_initializer(t));
}

TEST_CASE("zoo builds are deterministic in the seed", "[zoo]") {
  for (const char* name :
       {"toy_tiny", "toy_linear", "toy_branched", "toy_allops", "resnet18", "mobilenet_v2"}) {
    INFO(name);
    const Graph a = build_zoo_model(name, 7), b = build_zoo_model(name, 7), c = build_zoo_model(name, 8);
    REQUIRE(a.nodes.size() == b.nodes.size());
    for (size_t i = 0; i < a.nodes.size(); ++i) {
      CHECK(a.nodes[i].name == b.nodes[i].name);
      CHECK(a.nodes[i].inputs == b.nodes[i].inputs);
      CHECK(a.nodes[i].outputs == b.nodes[i].outputs);
    }
    CHECK(a.initializer_order == b.initializer_order);
    CHECK(a.initializer_order == c.initializer_order);
    size_t differing = 0, random_tensors = 0;
    for (const std::string& t : a.initializer_order) {
      CHECK(a.tensor(t).data == b.tensor(t).data);  // same seed: identical bytes
      if (t.rfind("relu6.", 0) == 0 || t.find(".shape") != std::string::npos) continue;  // constants
      ++random_tensors;
      if (a.tensor(t).data != c.tensor(t).data) ++differing;
    }
    CHECK(differing == random_tensors);  // another seed: every random tensor changes
  }
}

TEST_CASE("zoo BatchNorm statistics are realistic, with some negative gammas", "[zoo]") {
  for (const std::string& name : unit_sized_models()) {
    INFO(name);
    const Graph g = build_zoo_model(name);
    size_t channels = 0, negative = 0, bns = 0;
    double mean_sq = 0.0, beta_sq = 0.0;
    for (const Node& n : g.nodes) {
      if (n.op_type != "BatchNormalization") continue;
      ++bns;
      const std::vector<float> gamma = g.tensor(n.inputs[1]).as_float(),
                               beta = g.tensor(n.inputs[2]).as_float(),
                               mean = g.tensor(n.inputs[3]).as_float(),
                               var = g.tensor(n.inputs[4]).as_float();
      size_t neg_here = 0, odd_gamma = 0, odd_var = 0;
      for (size_t i = 0; i < gamma.size(); ++i) {
        neg_here += gamma[i] < 0.0f;
        odd_gamma += std::fabs(std::fabs(gamma[i]) - 1.0f) >= 0.6f;  // expected around 1 in magnitude
        odd_var += !(var[i] >= 0.5f && var[i] <= 2.0f);
        mean_sq += double(mean[i]) * mean[i];
        beta_sq += double(beta[i]) * beta[i];
      }
      INFO(n.name);
      CHECK(odd_gamma == 0);
      CHECK(odd_var == 0);
      CHECK(neg_here >= 1);  // every BN has a sign flip for folding to cope with
      negative += neg_here;
      channels += gamma.size();
      const float eps = n.attr_float("epsilon", 0.0f);
      CHECK(eps == (name == "googlenet" ? 1e-3f : 1e-5f));
    }
    if (bns == 0) continue;  // squeezenet, alexnet
    const double frac = double(negative) / double(channels);
    if (!is_toy(name)) {
      CHECK(frac >= 0.05);
      CHECK(frac <= 0.10);
      // N(0, 0.1) running mean and beta: sample standard deviations near 0.1.
      CHECK(std::sqrt(mean_sq / double(channels)) == Approx(0.1).epsilon(0.1));
      CHECK(std::sqrt(beta_sq / double(channels)) == Approx(0.1).epsilon(0.1));
    }
  }
}
