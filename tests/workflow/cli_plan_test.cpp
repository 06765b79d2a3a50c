// frugal plan on the VBS paper's worked example (three layers, in = out = b,
// ws = b, 4b, b, memory 7, time(., 1) = 4, time(., 2) = 3): VBS 10 per sample,
// fixed batch 12; and every bad input refused with its reason.
#include "workflow_test_util.h"

namespace {

// The paper's units: 1 byte per sample, 1 second.
nlohmann::json paper_costs() {
  auto layer = [](const char* name, const char* input, int ws) {
    return nlohmann::json{{"name", name},       {"inputs", {input}},   {"time_s", {4.0, 3.0}},
                          {"in_bytes", {1, 2}}, {"out_bytes", {1, 2}}, {"ws_bytes", {ws, 2 * ws}}};
  };
  return {{"model", "paper"},
          {"executor", "paper"},
          {"batch_max", 2},
          {"layers", {layer("L1", "", 1), layer("L2", "L1", 4), layer("L3", "L2", 1)}}};
}

// The table row of a layer in the summary: "  1  L1  2  1 B  1x2  3 B".
std::string row_of(const std::string& out, const std::string& layer) {
  std::smatch m;
  const std::regex re("\\n\\s+\\d+\\s+" + layer + "\\s+([^\\n]*)");
  INFO(out);
  REQUIRE(std::regex_search(out, m, re));
  return m[1].str();
}

}  // namespace

TEST_CASE("frugal plan: the paper's example gives 10 per sample with VBS, 12 with fixed batch",
          "[workflow]") {
  ScratchDir dir("plan");
  write_text(dir / "paper.json", paper_costs().dump());
  FrugalRun r = frugal_in(dir, "plan --costs paper.json --budget 7 --batch 2 --unit 1 -o plan.json");
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK(contains(r.output, "time        10 s per sample (predicted)"));
  CHECK(contains(r.output, "fbs         12 s per sample, peak 7 B (fixed batch, batch 1)"));
  CHECK(contains(r.output, "gain        16.7% less time per sample"));
  // Figure 9: L1 at 2, L2 twice at 1, L3 at 2; Table III: unused 1, 0, 1 (VBS), 3, 0, 3 (FBS).
  const std::regex spaces("\\s+");
  CHECK(std::regex_replace(row_of(r.output, "L1"), spaces, " ") == "2 1 B 1x2 3 B");
  CHECK(std::regex_replace(row_of(r.output, "L2"), spaces, " ") == "1x2 0 B 1x2 0 B");
  CHECK(std::regex_replace(row_of(r.output, "L3"), spaces, " ") == "2 1 B 1x2 3 B");

  const nlohmann::json plan = read_json(dir / "plan.json");
  CHECK(plan["time_per_sample_s"].get<double>() == Approx(10.0));
  CHECK(plan["baselines"]["fbs"]["time_per_sample_s"].get<double>() == Approx(12.0));

  FrugalRun j = frugal_in(dir, "plan --costs paper.json --budget 7 --batch 2 --unit 1 --planner fbs --json");
  REQUIRE(j.code == 0);
  CHECK(nlohmann::json::parse(j.output)["time_per_sample_s"].get<double>() == Approx(12.0));

  FrugalRun show = frugal_in(dir, "plan --costs paper.json --show plan.json");
  REQUIRE(show.code == 0);
  CHECK(contains(show.output, "10 s per sample"));
}

TEST_CASE("frugal plan: bad inputs are refused with their reason and a non-zero exit", "[workflow]") {
  ScratchDir dir("planbad");
  write_text(dir / "paper.json", paper_costs().dump());
  const std::string base = "plan --costs paper.json --unit 1 ";

  FrugalRun r = frugal_in(dir, base + "--budget 6 --batch 2");
  CHECK(r.code == 1);
  CHECK(contains(r.output, "needs at least 7 bytes"));

  r = frugal_in(dir, base + "--budget 7 --batch 0");
  CHECK(r.code == 2);
  CHECK(contains(r.output, "--batch must be >= 1"));

  r = frugal_in(dir, base + "--batch 2");
  CHECK(r.code == 2);
  CHECK(contains(r.output, "--budget is required"));

  nlohmann::json missing_layer = paper_costs();
  missing_layer["layers"][1]["inputs"] = {"L9"};
  write_text(dir / "missing_layer.json", missing_layer.dump());
  r = frugal_in(dir, "plan --costs missing_layer.json --budget 7 --batch 2");
  CHECK(r.code == 1);
  CHECK(contains(r.output, "missing_layer.json"));
  CHECK(contains(r.output, "reads 'L9', which is not a layer of the table"));

  nlohmann::json missing_batch = paper_costs();
  missing_batch["layers"][0]["time_s"] = {4.0};
  write_text(dir / "missing_batch.json", missing_batch.dump());
  r = frugal_in(dir, "plan --costs missing_batch.json --budget 7 --batch 2");
  CHECK(r.code == 1);
  CHECK(contains(r.output, "\"time_s\" has 1 entries, batch_max is 2"));

  std::string nan_text = paper_costs().dump();
  nan_text.replace(nan_text.find("4.0"), 3, "NaN");
  write_text(dir / "nan.json", nan_text);
  r = frugal_in(dir, "plan --costs nan.json --budget 7 --batch 2");
  CHECK(r.code == 1);
  CHECK(contains(r.output, "nan.json"));
  CHECK(contains(r.output, "NaN"));

  r = frugal_in(dir, "plan --costs nowhere.json --budget 7 --batch 2");
  CHECK(r.code == 2);
  CHECK(contains(r.output, "nowhere.json"));

  // A plan for another model: its layer names are not the cost table's.
  write_text(dir / "other_plan.json",
             R"({"model": "toy", "batch": 2, "steps": [{"layer": "conv1", "first": 0, "count": 2}],
                 "layers": [{"name": "conv1", "batches": [2]}]})");
  r = frugal_in(dir, "plan --costs paper.json --show other_plan.json");
  CHECK(r.code == 1);
  CHECK(contains(r.output, "other_plan.json was made for another model ('toy')"));
  CHECK(contains(r.output, "'conv1'"));
  for (const FrugalRun& x : {r}) CHECK(!contains(x.output, "stack traceback"));
}

TEST_CASE("frugal plan: a cost table with null, 1e400 or a negative value is refused naming file and field",
          "[workflow]") {
  ScratchDir dir("plannumbers");
  // The value replaces L2's time_s[1] (or, for "ws", L3's ws_bytes[0]) in the text.
  auto with = [&](const std::string& file, const std::string& value, const char* field = "time") {
    nlohmann::json c = paper_costs();
    if (std::string(field) == "ws")
      c["layers"][2]["ws_bytes"][0] = 123456789;
    else
      c["layers"][1]["time_s"][1] = 123456789;
    std::string text = c.dump(1);
    text.replace(text.find("123456789"), 9, value);
    write_text(dir / file, text);
    return frugal_in(dir, "plan --costs " + file + " --budget 7 --batch 2 --unit 1");
  };
  FrugalRun r = with("null.json", "null");
  INFO(r.output);
  CHECK(r.code == 1);
  CHECK(contains(r.output, "null.json: layers[1].time_s[1] is null"));

  r = with("huge.json", "1e400");
  INFO(r.output);
  CHECK(r.code == 1);
  CHECK(contains(r.output, "huge.json: layers[1].time_s[1] = 1e400 is beyond the range of a double"));

  r = with("minus_huge.json", "-1e400", "ws");
  INFO(r.output);
  CHECK(r.code == 1);
  CHECK(contains(r.output, "minus_huge.json: layers[2].ws_bytes[0] = -1e400 is beyond the range"));

  r = with("negative.json", "-0.5");
  INFO(r.output);
  CHECK(r.code == 1);
  CHECK(contains(r.output, "negative.json: layer 1 'L2' time_s[1] (batch 2) is negative"));

  r = with("nan.json", "NaN");
  INFO(r.output);
  CHECK(r.code == 1);
  CHECK(contains(r.output, "nan.json: not valid JSON (line "));
  CHECK(contains(r.output, ", layers[1].time_s[1])"));

  // frugal.plan given the file name names the file too.
  r = frugal_in(dir, "-e \"frugal.plan('null.json', {budget = 7, batch = 2, unit = 1})\"");
  INFO(r.output);
  CHECK(r.code != 0);
  CHECK(contains(r.output, "null.json: layer 1 'L2' time_s[1] (batch 2) is null, not a number"));
}

TEST_CASE("frugal run --plan: a plan for another model or request size is refused", "[workflow]") {
  ScratchDir dir("runplan");
  write_text(
      dir / "linear_plan.json",
      R"({"model": "toy_linear", "batch": 1, "steps": [{"layer": "block3.conv", "first": 0, "count": 1}]})");
  FrugalRun r = frugal_in(dir, "run zoo:toy_tiny --plan linear_plan.json --repeat 1");
  CHECK(r.code == 1);
  CHECK(contains(r.output, "was made for another model 'toy_linear'"));
  CHECK(contains(r.output, "'block3.conv'"));

  // A plan made for toy_tiny at batch 2 given a batch of 3.
  REQUIRE(frugal_in(dir, "profile zoo:toy_tiny --upto 2 --repeat 1 -o c.json").code == 0);
  REQUIRE(frugal_in(dir, "plan --costs c.json --budget 1MB --batch 2 -o p.json").code == 0);
  r = frugal_in(dir, "run zoo:toy_tiny --plan p.json --batch 3 --repeat 1");
  CHECK(r.code == 2);
  CHECK(contains(r.output, "--plan p.json is for a request of 2 samples, not 3 (--batch 3)"));
  r = frugal_in(dir, "run zoo:toy_tiny --plan p.json --batch 2 --repeat 1");
  CHECK(r.code == 0);
  // Without --batch or --input, the plan's request size.
  r = frugal_in(dir, "run zoo:toy_tiny --plan p.json --repeat 1");
  CHECK(r.code == 0);
  CHECK(contains(r.output, "batch       2 (random input, seed 0), plan p.json"));
}
