// The gating commands end to end (docs/GATING.md): frugal gate writes a model
// whose gates frugal info lists and frugal run runs gated, with the activity
// asked; every bad input is a one-line error naming what is wrong.
#include <catch2/catch.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "run_frugal.h"

using Catch::Matchers::Contains;

TEST_CASE("gate cli: gate, info, run --json and --gate-threshold on a toy", "[gating][cli]") {
  const std::string out = scratch_file("gated.onnx", "");
  FrugalRun r = run_frugal("gate zoo:toy_tiny -o " + sh_quote(out) + " --activity 0.5 --batch 4 --seed 3");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.output, Contains("activity    50.0% of 8 gated kernels on (asked 50.0%)"));
  r = run_frugal("info " + sh_quote(out));
  REQUIRE(r.code == 0);
  CHECK_THAT(r.output, Contains("gates       2 gated conv layer(s)"));
  // Both executors run gates gated (Vulkan since its indirect dispatch per sample).
  CHECK_THAT(r.output, Contains("the cpu and vulkan executors run only their switched-on kernels"));
  CHECK_THAT(r.output, !Contains("densely"));
  const nlohmann::json info = nlohmann::json::parse(run_frugal("info --json " + sh_quote(out)).output);
  CHECK(info["gates"].size() == 2);
  CHECK(info["gate_near_misses"].empty());
  for (const char* t : {"0", "1"}) {
    r = run_frugal("run " + sh_quote(out) + " --batch 3 --repeat 1 --quiet --json --gate-threshold " + t);
    REQUIRE(r.code == 0);
    const nlohmann::json j = nlohmann::json::parse(r.output);
    const nlohmann::json& gates = j["report"]["gates"];
    REQUIRE(gates.size() >= 2);
    CHECK(gates[0]["activity"] == (std::string(t) == "0" ? 1.0 : 0.0));
    CHECK(gates[0]["samples"] == 3);
  }
  r = run_frugal("run " + sh_quote(out) + " --repeat 1 --quiet");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.output, Contains("gates       ") && Contains("effective MACs"));
  std::remove(out.c_str());
}

TEST_CASE("gate cli: bad input is refused naming the argument", "[gating][cli]") {
  const std::string out = scratch_file("bad.onnx", "");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"gate zoo:toy_tiny -o " + out + " --activity 1.5", "--activity"},
      {"gate zoo:toy_tiny -o " + out + " --threshold 1", "--threshold 1 must be inside (0, 1)"},
      {"gate zoo:toy_tiny -o " + out + " --layers nope", "no Conv node named 'nope' to gate"},
      {"gate zoo:resnet18 -o " + out + " --layers layer1.0.conv2",
       "Conv node 'layer1.0.conv2' cannot be gated: its output reaches Add node 'layer1.0.add'"},
      {"gate zoo:toy_tiny", "give -o OUT.onnx"},
      {"run zoo:toy_tiny --gate-threshold 0.5", "--gate-threshold: zoo:toy_tiny has no kernel gates"},
      {"run zoo:toy_tiny@gate0.5 --gate-threshold 2", "--gate-threshold"},
      {"run zoo:toy_tiny@gate7", "a gated variant is zoo:NAME@gateA"},
  };
  for (const auto& [args, want] : cases) {
    const FrugalRun r = run_frugal(args);
    INFO(args << "\n" << r.output);
    CHECK(r.code != 0);
    CHECK_THAT(r.output, Contains(want));
    CHECK(r.output.find("traceback") == std::string::npos);
  }
  std::remove(out.c_str());
}

TEST_CASE("gate cli: zoo gated variants load in every command", "[gating][cli]") {
  const FrugalRun r = run_frugal("run zoo:toy_tiny@gate0.25 --batch 8 --repeat 1 --quiet --json");
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.output);
  double on = 0, all = 0;
  for (const nlohmann::json& g : j["report"]["gates"])
    if (g["gated"] == true) on += g["kernels_on"].get<double>(), all += g["kernels"].get<double>();
  CHECK(all > 0);
  CHECK(on / all < 0.5);  // calibrated to 0.25 on other random samples
}

TEST_CASE("gate cli: a gated network runs in its planned arena without moving chunks", "[gating][cli]") {
  // Gated layers' workspaces are whole 64-byte lines, as the arena places chunks: gated
  // squeezenet1_1 at batch 1 (activity 1) moved features.0's 3 MB output in every run when the
  // gated conv's workspace ended 32 bytes short of a line. (The dense network's moves depend on
  // the build's kernels: without oneDNN its workspaces are not whole lines either.)
  const FrugalRun r = run_frugal("run zoo:squeezenet1_1@gate1 --repeat 1 --quiet --json");
  REQUIRE(r.code == 0);
  const nlohmann::json rep = nlohmann::json::parse(r.output)["report"];
  CHECK(rep["compactions"] == 0);
  CHECK(rep["moved_bytes"] == 0);
  CHECK(rep["peak_bytes"] == rep["predicted_peak_bytes"]);
}
