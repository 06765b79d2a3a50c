// frugal predictor train, profile --predict and workflow --predict on toy
// networks: the table's memory equals the measured table's, its times are
// marked "predicted" (or "measured" for --measure), and bad input gets one
// clear line.
#include <map>
#include <set>
#include <string>

#include "workflow_test_util.h"

namespace {

// `s` without its parenthesized parts and the spaces before them:
// "oneDNN jit (nchw -> blocked, 2 slices)" -> "oneDNN jit".
std::string without_parentheses(const std::string& s) {
  std::string out;
  int depth = 0;
  for (const char c : s) {
    if (c == '(') {
      if (depth++ == 0)
        while (!out.empty() && out.back() == ' ') out.pop_back();
    } else if (c == ')' && depth > 0) {
      --depth;
    } else if (depth == 0) {
      out += c;
    }
  }
  return out;
}

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
  // The predicted table's step overheads: the training set's means per family (the file's).
  const nlohmann::json file = read_json(dir / "p.json")["step_overhead"];
  CHECK(file["layers"].get<int>() > 0);
  CHECK(p["step_overhead_s"] == file["default"]);
  std::set<double> means = {file["default"].get<double>()};
  for (const auto& [family, s] : file["by_family"].items()) means.insert(s.get<double>());
  for (const auto& layer : p["layers"]) CHECK(means.count(layer["step_overhead_s"].get<double>()) == 1);
  // --fit: per layer a line through the predicted per-batch times, which stay as measured_time_s.
  r = frugal_in(dir, "profile zoo:toy_branched --predict p.json --upto 3 --threads 1 --fit -o fit.json");
  REQUIRE(r.code == 0);
  const nlohmann::json fit = read_json(dir / "fit.json");
  for (size_t l = 0; l < fit["layers"].size(); ++l) {
    const nlohmann::json& layer = fit["layers"][l];
    CHECK(layer["measured_time_s"] == p["layers"][l]["time_s"]);
    const double fixed = layer["time_model"]["fixed_s"], per_sample = layer["time_model"]["per_sample_s"];
    for (int b = 1; b <= 3; ++b)
      CHECK(layer["time_s"][size_t(b - 1)].get<double>() == Approx((fixed + per_sample * b) / b));
  }
}

// workflow --predict plans from the table profile --predict writes for the
// folded model: fitted by default, raw with --raw; --batches are measured.
TEST_CASE("frugal workflow --predict: fitted unless --raw, --batches measured", "[workflow]") {
  ScratchDir dir("predict_workflow");
  train_toys(dir);
  REQUIRE(frugal_in(dir, "fold zoo:toy_branched folded.onnx").code == 0);
  for (const std::string raw : {"", " --raw"}) {
    FrugalRun r =
        frugal_in(dir, "workflow zoo:toy_branched --predict p.json --batch 2 --repeat 1 --threads 1" + raw +
                           " --min-gain 0 --report w.json");
    INFO(r.output);
    REQUIRE(r.code == 0);
    CHECK(contains(r.output, raw.empty() ? "times fitted per layer" : "raw times (--raw)"));
    const nlohmann::json w = read_json(dir / "w.json");
    CHECK(w["fitted"] == raw.empty());
    // The same plan from the same table made by profile --predict [--fit] and frugal plan.
    REQUIRE(frugal_in(dir, "profile folded.onnx --predict p.json --upto 2 --threads 1" +
                               std::string(raw.empty() ? " --fit" : "") + " -o t.json")
                .code == 0);
    const FrugalRun plan = frugal_in(dir, "plan --costs t.json --batch 2 --json --budget " +
                                              std::to_string(w["budget_bytes"].get<int64_t>()));
    REQUIRE(plan.code == 0);
    CHECK(nlohmann::json::parse(plan.output)["time_per_sample_s"].get<double>() ==
          Approx(w["vbs_plan"]["time_per_sample_s"].get<double>()));
  }
  FrugalRun r = frugal_in(dir,
                          "workflow zoo:toy_branched --predict p.json --batch 2 --batches 1 --repeat 1 "
                          "--threads 1 --report w.json");
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK(contains(r.output, "batch sizes 1..2, 1 measured, the others predicted by p.json"));
  CHECK(read_json(dir / "w.json")["profile"]["measured_batches"] == nlohmann::json({1}));
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
  write_text(dir / "v1.json", R"({"format": "frugal-predictor", "format_version": 1})");
  r = frugal_in(dir, "profile zoo:toy_tiny --predict v1.json");
  CHECK(r.code == 1);
  CHECK(contains(r.output,
                 "frugal: xgb: v1.json: predictor file format version 1, this predictor reads version 4"));
  write_text(dir / "list.json", "[]");
  r = frugal_in(dir, "workflow zoo:toy_tiny --predict list.json");
  CHECK(r.code == 1);
  CHECK(contains(r.output, "list.json: not a JSON object (not a predictor file)"));
}

TEST_CASE("frugal bench-predict on toys: a row per experiment, every measured point of an unseen network",
          "[workflow]") {
  ScratchDir dir("bench_predict");
  // The unseen network folded as bench-predict folds it (BaN-OFF), profiled: the
  // reference for the (layer, batch) points counted.
  FrugalRun r = frugal_in(dir, "fold zoo:toy_branched folded.onnx --method banoff");
  REQUIRE(r.code == 0);
  r = frugal_in(dir, "profile folded.onnx --upto 2 --repeat 1 --threads 1 -o m.json");
  REQUIRE(r.code == 0);
  const size_t layers = read_json(dir / "m.json")["layers"].size();
  REQUIRE(layers > 0);
  r = frugal_in(dir,
                "bench-predict --basis toy_tiny,toy_linear,toy_allops --unseen toy_branched --batches 1,2 "
                "--pruning 0,50 --test-pruning 30 --modes forest --plan-nets toy_branched --plan-batch 2 "
                "--runs 1 --repeat 1 "
                "--threads 1 --keep kept");
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK(contains(r.output, "mode        forest"));
  CHECK(contains(r.output, "(a)   basis, random 20%"));
  // Trained on toy_tiny, toy_linear and toy_allops; every measured point of toy_branched predicted.
  char row[200];
  std::snprintf(row, sizeof row, "(b)   %-22s  %7zu", "toy_branched", 2 * layers);
  CHECK(contains(r.output, row));
  CHECK(contains(r.output, "(c)   toy_tiny"));
  CHECK(contains(r.output, "(c)   all"));
  // The plans from both tables, each with its price by its own table and its steps.
  CHECK(contains(r.output, "plans       toy_branched     budget "));
  CHECK(contains(r.output, "VBS from the measured table "));
  CHECK(contains(r.output, " steps), from the predicted "));
  // A row per kind of layer of the unseen network (ops joined by "+", the kernel
  // path without its details in parentheses), with its measured points.
  std::map<std::string, size_t> kinds;
  const nlohmann::json measured = read_json(dir / "m.json");  // kept: the loop reads its members
  for (const auto& l : measured["layers"]) {
    std::string kind;
    for (const auto& op : l["ops"]) kind += (kind.empty() ? "" : "+") + op.get<std::string>();
    const std::string path = without_parentheses(l.value("algorithm", std::string()));
    kinds[path.empty() ? kind : kind + " [" + path + "]"] += 2;  // batch 1 and 2
  }
  CHECK(contains(r.output, "(b)   kind of layer"));
  for (const auto& [kind, points] : kinds) {
    std::snprintf(row, sizeof row, "(b)   %-52s  %7zu", kind.c_str(), points);
    CHECK(contains(r.output, row));
  }
  // --keep: the trained files stay, each a predictor file of its mode.
  for (const char* f : {"kept_split_forest.json", "kept_basis_forest.json"}) {
    INFO(f);
    const nlohmann::json p = read_json(dir / f);
    CHECK(p["format"] == "frugal-predictor");
    CHECK(p["mode"] == "forest");
  }
  CHECK(read_json(dir / "kept_basis_forest.json")["training_set"].size() == 6);
}
