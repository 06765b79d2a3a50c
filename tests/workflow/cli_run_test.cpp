// frugal run: outputs against the float64 reference, the printed top-5 against
// the reference's ranking, and the budget refusal naming a budget that works.
#include <algorithm>
#include <limits>

#include "reference.h"
#include "tensor/npy.h"
#include "workflow_test_util.h"
#include "zoo/zoo.h"

using namespace frugal;

TEST_CASE("frugal run zoo:toy_tiny: --output equals the float64 reference on the --input", "[workflow]") {
  ScratchDir dir("run");
  const Tensor x = to_float_tensor(random_ref_tensor({3, 3, 8, 8}, 7));
  save_npy(x, dir / "x.npy");
  FrugalRun r = frugal_in(dir, "run zoo:toy_tiny --input x.npy --output y.npy --repeat 1");
  INFO(r.output);
  REQUIRE(r.code == 0);
  const Tensor y = load_npy(dir / "y.npy");
  const RefValues ref = reference_run(build_zoo_model("toy_tiny", 1), {{"input", to_ref(x)}});
  const RefTensor& want = ref.at("output");
  REQUIRE(y.dims == want.dims);
  CHECK(max_rel_diff(to_ref(y), want) < 1e-4);

  // The printed rank-1 class of sample 1 is the reference's argmax.
  const auto best = std::max_element(want.data.begin(), want.data.begin() + want.dims[1]) - want.data.begin();
  CHECK(capture_integer(r.output, R"(\n\s+1\s+(\d+)\s+\S+\n)") == best);
  CHECK(contains(r.output, "batch       3 from x.npy"));
}

TEST_CASE("frugal run: a budget one byte short is refused naming the one that works, which does",
          "[workflow]") {
  ScratchDir dir("budget");
  FrugalRun whole = frugal_in(dir, "run zoo:toy_tiny --batch 4 --repeat 1");
  REQUIRE(whole.code == 0);
  const long long need = capture_integer(whole.output, R"(peak arena\s+\S+ \S+ \((\d+) bytes\))");
  REQUIRE(need > 0);

  FrugalRun short_run =
      frugal_in(dir, "run zoo:toy_tiny --batch 4 --repeat 1 --budget " + std::to_string(need - 1));
  CHECK(short_run.code != 0);
  CHECK(contains(short_run.output, "too small for a whole-batch run of 4 samples"));
  CHECK(contains(short_run.output, "(" + std::to_string(need) + " bytes)"));
  CHECK(!contains(short_run.output, "stack traceback"));

  FrugalRun exact = frugal_in(dir, "run zoo:toy_tiny --batch 4 --repeat 1 --budget " + std::to_string(need));
  CHECK(exact.code == 0);
  CHECK(capture_integer(exact.output, R"(peak arena\s+\S+ \S+ \((\d+) bytes\))") == need);
}

TEST_CASE("frugal run: bad arguments are clear errors", "[workflow]") {
  ScratchDir dir("runbad");
  FrugalRun r = frugal_in(dir, "run zoo:toy_tiny --batch 0");
  CHECK(r.code == 2);
  CHECK(contains(r.output, "--batch must be >= 1"));
  r = frugal_in(dir, "run zoo:no_such_net");
  CHECK(r.code == 1);
  CHECK(contains(r.output, "unknown zoo model 'no_such_net'"));
  r = frugal_in(dir, "run zoo:toy_tiny --input missing.npy");  // refused before loading the model
  CHECK(r.code == 2);
  CHECK(contains(r.output, "missing.npy"));
  r = frugal_in(dir, "run zoo:toy_tiny --winograd fast");  // not among the choices
  CHECK(r.code == 2);
  CHECK(contains(r.output, "--winograd"));
  r = frugal_in(dir, "run zoo:toy_tiny --winograd f23 --repeat 1");  // vulkan's only
  CHECK(r.code == 1);
  CHECK(contains(r.output, "option 'winograd' must be \"auto\" or \"off\""));
  CHECK(frugal_in(dir, "run zoo:toy_tiny --winograd off --repeat 1").code == 0);
  r = frugal_in(dir, "run zoo:toy_tiny --executor nope");
  CHECK(r.code == 1);
  CHECK(contains(r.output, "nope"));
  const Tensor wrong({2, 3, 9, 9});
  save_npy(wrong, dir / "wrong.npy");
  r = frugal_in(dir, "run zoo:toy_tiny --input wrong.npy");
  CHECK(r.code == 1);
  CHECK(!contains(r.output, "stack traceback"));
}

TEST_CASE("frugal run: an --input with NaN or Inf is refused naming the file, or run with a warning",
          "[workflow]") {
  ScratchDir dir("runnan");
  Tensor x = to_float_tensor(random_ref_tensor({1, 3, 8, 8}, 3));
  x.data[17] = std::numeric_limits<float>::infinity();
  save_npy(x, dir / "inf.npy");
  FrugalRun r = frugal_in(dir, "run zoo:toy_tiny --input inf.npy --repeat 1");
  INFO(r.output);
  CHECK(r.code == 1);
  CHECK(contains(r.output, "'inf.npy': 1 value is not finite (the first, +Inf, at index [0, 0, 2, 1])"));
  CHECK(contains(r.output, "--allow-nonfinite"));
  r = frugal_in(dir, "run zoo:toy_tiny --input inf.npy --repeat 1 --allow-nonfinite");
  CHECK(r.code == 0);
  CHECK(contains(r.output, "warning: 'inf.npy': 1 value is not finite"));
}
