// frugal fold: the written model computes what the input model computes (float64
// reference), its BatchNorm nodes are the ones not reported folded, and the
// summary line's numbers are the report's.
#include "frugal/model/onnx_import.h"
#include "reference.h"
#include "workflow_test_util.h"
#include "zoo/zoo.h"

using namespace frugal;

namespace {

int count_bn(const Graph& g) {
  int n = 0;
  for (const Node& node : g.nodes) n += node.op_type == "BatchNormalization";
  return n;
}

}  // namespace

TEST_CASE("frugal fold: folded model matches, BN counts match the report and the graph", "[workflow]") {
  for (const std::string name : {"toy_branched", "toy_allops", "toy_linear"}) {
    for (const std::string method : {"banoff", "naive"}) {
      INFO(name << " " << method);
      ScratchDir dir("fold");
      FrugalRun r = frugal_in(dir, "fold zoo:" + name + " out.onnx --method " + method + " --report r.json");
      INFO(r.output);
      REQUIRE(r.code == 0);

      const Graph original = build_zoo_model(name, 1);
      const Graph folded = load_onnx_file(dir / "out.onnx");
      const std::string input = original.inputs.at(0);
      std::vector<int64_t> dims = {2};
      for (size_t i = 1; i < original.tensor(input).shape.size(); ++i)
        dims.push_back(original.tensor(input).shape[i].value);
      const RefTensor x = random_ref_tensor(dims, 11);
      const RefValues a = reference_run(original, {{input, x}});
      const RefValues b = reference_run(folded, {{input, x}});
      for (const auto& [out, t] : a) CHECK(max_rel_diff(b.at(out), t) < 1e-5);

      const nlohmann::json rep = read_json(dir / "r.json");
      const int total = static_cast<int>(capture_integer(r.output, R"(summary: (\d+) BatchNorm node)"));
      const int naive = static_cast<int>(capture_integer(r.output, R"(naive folds (\d+))"));
      const int banoff = static_cast<int>(capture_integer(r.output, R"(BaN-OFF folds (\d+))"));
      CHECK(total == count_bn(original));
      CHECK(rep["bn_total"] == total);
      CHECK(rep["method"] == method);
      CHECK(rep["comparison"]["naive"]["bn_folded"] == naive);
      CHECK(rep["comparison"]["banoff"]["bn_folded"] == banoff);
      const int chosen = method == "banoff" ? banoff : naive;
      CHECK(rep["bn_folded"] == chosen);
      CHECK(count_bn(folded) == total - chosen);
      CHECK(naive <= banoff);  // BaN-OFF folds every BN the naive rule folds, and more
      // Every BN node is listed, folded ones with where they went.
      for (const auto& n : rep["nodes"]) {
        CHECK(contains(r.output, n["name"].get<std::string>()));
        if (n["folded"] == true)
          for (const auto& into : n["into"]) CHECK(contains(r.output, into.get<std::string>()));
      }
    }
  }
}

TEST_CASE("frugal fold: bad arguments", "[workflow]") {
  ScratchDir dir("foldbad");
  FrugalRun r = frugal_in(dir, "fold zoo:toy_tiny out.onnx --method best");
  CHECK(r.code == 2);
  CHECK(contains(r.output, "--method must be one of banoff, naive, got 'best'"));
  r = frugal_in(dir, "fold missing.onnx out.onnx");
  CHECK(r.code == 1);
  CHECK(contains(r.output, "missing.onnx"));
  r = frugal_in(dir, "fold zoo:toy_tiny");
  CHECK(r.code == 2);
  CHECK(contains(r.output, "missing OUT (where to write the folded model"));
}
