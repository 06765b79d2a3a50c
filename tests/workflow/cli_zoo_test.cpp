// frugal zoo: the written file is the zoo network of that seed (same function
// under the float64 reference, different from another seed's); refusals.
#include "frugal/model/onnx_import.h"
#include "reference.h"
#include "workflow_test_util.h"
#include "zoo/zoo.h"

using namespace frugal;

TEST_CASE("frugal zoo NAME -o FILE --seed S writes that network", "[workflow]") {
  ScratchDir dir("zoo");
  FrugalRun r = frugal_in(dir, "zoo toy_tiny -o t.onnx --seed 3");
  INFO(r.output);
  REQUIRE(r.code == 0);
  const Graph written = load_onnx_file(dir / "t.onnx");
  const Graph same = build_zoo_model("toy_tiny", 3);
  const Graph other = build_zoo_model("toy_tiny", 1);
  CHECK(written.parameter_count() == same.parameter_count());
  // The same "parameters" as zoo --list: learned ones; < 1000 here, so no commas.
  CHECK(contains(r.output, std::to_string(torchvision_parameter_count(same)) + " parameters"));
  const RefTensor x = random_ref_tensor({2, 3, 8, 8}, 9);
  const RefTensor a = reference_run(written, {{"input", x}}).at("output");
  CHECK(max_abs_diff(a, reference_run(same, {{"input", x}}).at("output")) == 0);
  CHECK(max_abs_diff(a, reference_run(other, {{"input", x}}).at("output")) > 0);
}

TEST_CASE("frugal zoo: refusals", "[workflow]") {
  ScratchDir dir("zoobad");
  FrugalRun r = frugal_in(dir, "zoo toy_tiny");
  CHECK(r.code == 2);
  CHECK(contains(r.output, "missing -o"));
  r = frugal_in(dir, "zoo nonet -o x.onnx");
  CHECK(r.code == 1);
  CHECK(contains(r.output, "unknown zoo model 'nonet'"));
  r = frugal_in(dir, "zoo toy_tiny -o /nonexistent/dir/x.onnx");  // refused before building
  CHECK(r.code == 2);
  CHECK(contains(r.output, "/nonexistent/dir/x.onnx"));
  r = frugal_in(dir, "zoo --list toy_tiny");
  CHECK(r.code == 2);
}
