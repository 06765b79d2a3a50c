// frugal predictor train, profile --predict and workflow --predict on toy
// networks: the table's memory equals the measured table's, its times are
// marked "predicted" (or "measured" for --measure), and bad input gets one
// clear line.
#include "workflow_test_util.h"

namespace {

// A predictor trained on three toys (batch 1, 2), in `dir`.
void train_toys(const ScratchDir& dir) {
  FrugalRun r = frugal_in(dir,
                          "predictor train --nets toy_tiny,toy_linear,toy_branched --batches 1,2 "
                          "--pruning 0,50 --repeat 1 --threads 1 -o p.json");
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK(contains(r.output, "trained     forest on"));
  CHECK(read_json(dir / "p.json")["training_set"].size() == 6);
}

}  // namespace

TEST_CASE("frugal profile --predict: predicted times, exact memory; --measure keeps measured ones",
          "[workflow]") {
  ScratchDir dir("predict");
  train_toys(dir);
  FrugalRun r = frugal_in(dir, "profile zoo:toy_branched --predict p.json --upto 3 --threads 1 -o pred.json");
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK(contains(r.output, "predicted by p.json"));
  CHECK(contains(r.output, "warning: layer '"));  // batch 3 is beyond training's 1..2
  r = frugal_in(dir, "profile zoo:toy_branched --upto 3 --repeat 1 --threads 1 -o meas.json");
  REQUIRE(r.code == 0);
  const nlohmann::json p = read_json(dir / "pred.json"), m = read_json(dir / "meas.json");
  REQUIRE(p["layers"].size() == m["layers"].size());
  for (size_t l = 0; l < p["layers"].size(); ++l) {
    for (const char* key : {"in_bytes", "out_bytes", "ws_bytes"})
      CHECK(p["layers"][l][key] == m["layers"][l][key]);
    CHECK(p["layers"][l]["source"] == nlohmann::json({"predicted", "predicted", "predicted"}));
  }
  r = frugal_in(
      dir,
      "profile zoo:toy_branched --predict p.json --measure 2 --upto 3 --repeat 1 --threads 1 -o mixed.json");
  REQUIRE(r.code == 0);
  const nlohmann::json mixed = read_json(dir / "mixed.json");  // the loop must not outlive it
  for (const auto& layer : mixed["layers"])
    CHECK(layer["source"] == nlohmann::json({"predicted", "measured", "predicted"}));
  r = frugal_in(dir, "workflow zoo:toy_branched --predict p.json --batch 2 --repeat 1 --threads 1");
  INFO(r.output);
  CHECK(r.code == 0);
  CHECK(contains(r.output, "2 predict   "));
}

TEST_CASE("frugal predictor and --predict refuse bad input with one line", "[workflow]") {
  ScratchDir dir("predict_bad");
  FrugalRun r = frugal_in(dir, "predictor fit -o x.json");
  CHECK(r.code == 2);
  CHECK(contains(r.output, "frugal: unknown action 'fit': the action is train"));
  r = frugal_in(dir, "predictor train --nets toy_tiny");
  CHECK(r.code == 2);
  CHECK(contains(r.output, "give the predictor file to write: -o FILE"));
  r = frugal_in(dir, "predictor train --nets toy_tiny --batches 1 --pruning 0 --repeat 1 -o small.json");
  CHECK(r.code == 1);
  CHECK(contains(r.output, "training set too small"));
  r = frugal_in(dir, "profile zoo:toy_tiny --measure 1");
  CHECK(r.code == 2);
  CHECK(contains(r.output, "--measure goes with --predict FILE"));
  r = frugal_in(dir, "profile zoo:toy_tiny --predict absent.json");
  CHECK(r.code == 2);
  CHECK(contains(r.output, "--predict: cannot read"));
  write_text(dir / "v2.json", R"({"format": "frugal-predictor", "format_version": 2})");
  r = frugal_in(dir, "profile zoo:toy_tiny --predict v2.json");
  CHECK(r.code == 1);
  CHECK(contains(r.output,
                 "frugal: xgb: v2.json: predictor file format version 2, this predictor reads version 1"));
  write_text(dir / "list.json", "[]");
  r = frugal_in(dir, "workflow zoo:toy_tiny --predict list.json");
  CHECK(r.code == 1);
  CHECK(contains(r.output, "list.json: not a JSON object (not a predictor file)"));
}
