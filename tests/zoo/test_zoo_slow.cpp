// The big zoo networks through the float64 reference evaluator at batch 1:
// every value has the shape the builder declared, and the logits are finite and
// O(1) (the weight scaling works at full depth). Also vgg16_bn's count and
// structure, which are too heavy for the unit run.
#include <catch2/catch.hpp>
#include <cmath>

#include "reduced_run.h"
#include "reference.h"
#include "zoo/zoo.h"
#include "zoo_checks.h"

using namespace frugal;

TEST_CASE("vgg16_bn has torchvision's parameter count and a well formed graph", "[zoo][slow]") {
  if (frugal_test::left_out_when_reduced("vgg16_bn")) return;
  const Graph g = build_zoo_model("vgg16_bn");
  CHECK(torchvision_parameter_count(g) == zoo_test::expected_torchvision_params("vgg16_bn"));
  const std::vector<std::string> problems = zoo_test::structure_problems(g);
  for (const std::string& p : problems) UNSCOPED_INFO(p);
  CHECK(problems.empty());
}

TEST_CASE("big zoo networks run through the reference with declared shapes and O(1) logits", "[zoo][slow]") {
  // vgg16_bn (15.5 GMACs) is left out to keep the suite short; its layers are
  // the same kinds as resnet's and alexnet's.
  for (const char* name : {"resnet18", "resnet50", "googlenet", "squeezenet1_0", "squeezenet1_1",
                           "mobilenet_v1", "mobilenet_v2", "alexnet", "efficientnet_b0"}) {
    if (frugal_test::left_out_when_reduced(name)) continue;
    INFO(name);
    const Graph g = build_zoo_model(name);
    const RefValues all = reference_run_all(g, {{"input", random_ref_tensor({1, 3, 224, 224}, 9)}});
    size_t mismatched = 0;
    for (const Node& n : g.nodes) {
      const TensorDesc& t = g.tensor(n.outputs[0]);
      std::vector<int64_t> declared;
      for (const Dim& d : t.shape) declared.push_back(d.is_known() ? d.value : 1);
      if (all.at(n.outputs[0]).dims != declared) {
        UNSCOPED_INFO("value " << n.outputs[0] << " has another shape than declared");
        ++mismatched;
      }
    }
    CHECK(mismatched == 0);
    const RefTensor& y = all.at("output");
    REQUIRE(y.dims == std::vector<int64_t>{1, 1000});
    double ss = 0.0;
    bool finite = true;
    for (double v : y.data) {
      finite = finite && std::isfinite(v);
      ss += v * v;
    }
    CHECK(finite);
    const double rms = std::sqrt(ss / 1000.0);
    CHECK(rms > 0.05);
    CHECK(rms < 20.0);
  }
}
