// frugal workflow on toy networks: the executed plans' measured arena peaks are
// the plans' predicted peaks, and every plan's outputs equal the float64
// reference of the ORIGINAL (unfolded) network on the same input.
#include "frugal/model/onnx_import.h"
#include "reference.h"
#include "tensor/npy.h"
#include "workflow_test_util.h"
#include "zoo/zoo.h"

using namespace frugal;

TEST_CASE("frugal workflow: measured peaks equal predicted peaks, outputs equal the reference",
          "[workflow]") {
  for (const auto& [name, batch] :
       std::vector<std::pair<std::string, int>>{{"toy_linear", 4}, {"toy_branched", 6}}) {
    INFO(name);
    ScratchDir dir("workflow");
    FrugalRun r = frugal_in(dir, "workflow zoo:" + name + " --batch " + std::to_string(batch) +
                                     " --threads 1 --repeat 1 --report wf.json --save out");
    INFO(r.output);
    REQUIRE(r.code == 0);
    const nlohmann::json w = read_json(dir / "wf.json");
    CHECK(w["batch"] == batch);
    // The default budget lies below the whole batch's need: plans are needed.
    CHECK(w["budget_bytes"].get<long long>() < w["whole_batch_bytes"].get<long long>());
    // The default budget is one where greedy has a plan too, when there is one.
    CHECK(w.contains("greedy"));
    for (const char* plan : {"vbs", "fbs", "greedy"}) {
      INFO(plan);
      if (std::string(plan) == "greedy" && !w.contains(plan)) continue;
      REQUIRE(w.contains(plan));
      CHECK(w[plan]["measured_peak_bytes"] == w[plan]["predicted_peak_bytes"]);
      CHECK(w[plan]["predicted_peak_bytes"].get<long long>() <= w["budget_bytes"].get<long long>());
      CHECK(w[plan]["agree"] == true);
    }
    for (const char* base : {"fbs", "greedy"})
      if (w.contains(base))
        CHECK(w["vbs"]["predicted_time_per_sample_s"].get<double>() <=
              w[base]["predicted_time_per_sample_s"].get<double>() * (1 + 1e-9));
    CHECK(w["fitted"] == true);  // fitted cost tables by default

    const Tensor x = load_npy(dir / "out_input.npy");
    REQUIRE(x.dims[0] == batch);
    const RefValues ref = reference_run(build_zoo_model(name, 1), {{"input", to_ref(x)}});
    for (const char* plan : {"vbs", "fbs", "greedy"}) {
      INFO(plan);
      if (!w.contains(plan)) continue;
      const Tensor y = load_npy(dir / (std::string("out_") + plan + ".npy"));
      CHECK(max_rel_diff(to_ref(y), ref.at("output")) < 1e-4);
    }
    CHECK(contains(r.output, "per layer, the sizes of its steps in samples"));
  }
}

TEST_CASE("frugal workflow: a given budget below every plan is refused with the minimum", "[workflow]") {
  ScratchDir dir("wfbad");
  FrugalRun r = frugal_in(dir, "workflow zoo:toy_tiny --batch 4 --threads 1 --repeat 1 --budget 100");
  CHECK(r.code == 1);
  CHECK(contains(r.output, "needs at least"));
  r = frugal_in(dir, "workflow zoo:toy_tiny --batch 4 --batches 1,5");
  CHECK(r.code == 2);
  CHECK(contains(r.output, "batch size 5 is outside 1..4"));
}

TEST_CASE("frugal profile and workflow on a gated model: stated or calibrated activity, plans exact",
          "[workflow][gating]") {
  ScratchDir dir("wfgate");
  REQUIRE(frugal_in(dir, "zoo toy_tiny@gate0.5 -o gated.onnx").code == 0);
  // The profiler records the activity it timed gated layers at: the stated one, else a calibrated one.
  FrugalRun r =
      frugal_in(dir, "profile gated.onnx --upto 2 --repeat 1 --quiet --gate-activity 0.25 -o c1.json");
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK(read_json(dir / "c1.json")["gate_activity"] == 0.25);
  r = frugal_in(dir, "profile gated.onnx --upto 2 --repeat 1 --quiet -o c2.json");
  REQUIRE(r.code == 0);
  const nlohmann::json c2 = read_json(dir / "c2.json");
  REQUIRE(c2.contains("gate_activity"));
  const nlohmann::json& calibrated = c2["gate_activity"];
  CHECK((calibrated.is_object() ||
         (calibrated.is_number() && calibrated.get<double>() > 0 && calibrated.get<double>() <= 1)));
  // Plans over gated layers: memory at the dense upper bound, so measured peaks are the predicted ones,
  // and the outputs are the gated network's float64 reference.
  r = frugal_in(dir, "workflow gated.onnx --batch 4 --threads 1 --repeat 1 --report wf.json --save out");
  INFO(r.output);
  REQUIRE(r.code == 0);
  const nlohmann::json w = read_json(dir / "wf.json");
  const Tensor x = load_npy(dir / "out_input.npy");
  const RefValues ref = reference_run(load_onnx_file(dir / "gated.onnx"), {{"input", to_ref(x)}});
  int plans = 0;
  for (const char* plan : {"vbs", "fbs", "greedy"}) {
    INFO(plan);
    if (!w.contains(plan)) continue;
    ++plans;
    CHECK(w[plan]["measured_peak_bytes"] == w[plan]["predicted_peak_bytes"]);
    const Tensor y = load_npy(dir / (std::string("out_") + plan + ".npy"));
    CHECK(max_rel_diff(to_ref(y), ref.at("output")) < 1e-4);
  }
  CHECK(plans >= 2);
}
