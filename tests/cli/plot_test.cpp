// frugal plot: each figure drawn from a fixed input is well-formed SVG with
// one element per thing it shows, sized by its value: a box per plan step
// (width proportional to its samples, class by phase), a bar per layer
// (length proportional to the memory in use), a panel per network with a
// dot per measured point.
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "run_frugal.h"
#include "xml_tree.h"

using Catch::Matchers::Contains;

namespace {

const std::string kData = FRUGAL_SOURCE_DIR "/tests/cli/data/";

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), {});
}

nlohmann::json read_json(const std::string& path) { return nlohmann::json::parse(read_file(path)); }

// frugal plot FIGURE INPUT -o tmp.svg, parsed.
std::unique_ptr<XmlElement> plot(const std::string& figure, const std::string& input) {
  const std::string out = scratch_file(figure + ".svg", "");
  const FrugalRun r = run_frugal("plot " + figure + " " + sh_quote(input) + " -o " + sh_quote(out));
  INFO(r.output);
  REQUIRE(r.code == 0);
  CHECK(r.output == "wrote " + out + "\n");
  const std::string text = read_file(out);
  std::remove(out.c_str());
  CHECK(text.find("nan") == std::string::npos);
  CHECK(text.find("inf") == std::string::npos);
  std::unique_ptr<XmlElement> root;
  REQUIRE_NOTHROW(root = XmlReader::parse(text));
  CHECK(root->name == "svg");
  CHECK(root->attr("xmlns") == "http://www.w3.org/2000/svg");
  CHECK(!root->all("title").empty());
  return root;
}

double number(const XmlElement* e, const std::string& key) { return std::stod(e->attr(key)); }

}  // namespace

TEST_CASE("plot plan: a box per step, width by its samples, coloured by phase; fixed batch beside",
          "[cli][plot]") {
  const nlohmann::json plan = read_json(kData + "plan_toy_branched.json");
  const auto svg = plot("plan", kData + "plan_toy_branched.json");
  const auto steps = svg->all("rect", "step");
  REQUIRE(steps.size() == plan["steps"].size());
  // Same order as the plan's steps; width + 1 (the gap) proportional to the count.
  const double per_sample = (number(steps[0], "width") + 1) / plan["steps"][0]["count"].get<double>();
  for (size_t k = 0; k < steps.size(); ++k) {
    const double count = plan["steps"][k]["count"].get<double>();
    CHECK(number(steps[k], "width") + 1 == Approx(per_sample * count).epsilon(1e-3));
  }
  for (size_t p = 0; p < plan["phases"].size(); ++p) {
    const size_t n = plan["phases"][p]["step_count"].get<size_t>();
    CHECK(svg->all("rect", "phase" + std::to_string(p + 1)).size() == n);
  }
  size_t fbs_steps = 0;
  for (const auto& l : plan["layers"]) fbs_steps += l["fbs_batches"].size();
  CHECK(svg->all("rect", "fbs-step").size() == fbs_steps);
  CHECK(svg->all("text", "layer").size() == plan["layers"].size());
}

TEST_CASE("plot plan: a planner plugin's plan (steps only) gets its phases from the steps", "[cli][plot]") {
  const auto svg = plot("plan", kData + "plan_halfbatch.json");
  CHECK(svg->all("rect", "phase1").size() == 14);
  CHECK(svg->all("rect", "phase2").size() == 14);
  CHECK(svg->all("rect", "fbs-step").empty());
}

TEST_CASE("plot memory: a bar per layer for the plan and for fixed batch, and the budget", "[cli][plot]") {
  const nlohmann::json plan = read_json(kData + "plan_toy_branched.json");
  const auto svg = plot("memory", kData + "plan_toy_branched.json");
  const auto bars = svg->all("rect", "plan");
  const auto fbs = svg->all("rect", "fbs");
  REQUIRE(bars.size() == plan["layers"].size());
  REQUIRE(fbs.size() == plan["layers"].size());
  const double budget = plan["budget_bytes"].get<double>();
  const double scale = number(bars[0], "width") / (budget - plan["layers"][0]["unused_bytes"].get<double>());
  for (size_t i = 0; i < bars.size(); ++i) {
    const auto& l = plan["layers"][i];
    CHECK(number(bars[i], "width") ==
          Approx(scale * (budget - l["unused_bytes"].get<double>())).margin(0.02));
    CHECK(number(fbs[i], "width") ==
          Approx(scale * (budget - l["fbs_unused_bytes"].get<double>())).margin(0.02));
  }
  const auto budget_line = svg->all("line", "budget");
  REQUIRE(budget_line.size() == 1);
  CHECK(number(budget_line[0], "x1") - number(bars[0], "x") == Approx(scale * budget).margin(0.02));
}

TEST_CASE("plot bench-vbs: a panel per network, a dot per measured point, lines per planner", "[cli][plot]") {
  const nlohmann::json data = read_json(kData + "bench_vbs.json");
  const auto svg = plot("bench-vbs", kData + "bench_vbs.json");
  std::map<std::string, std::map<std::string, int>> points;  // network -> planner -> measured points
  for (const auto& r : data["rows"])
    if (!r.contains("error")) ++points[r["network"].get<std::string>()][r["planner"].get<std::string>()];
  const auto panels = svg->all("g", "panel");
  REQUIRE(panels.size() == points.size());
  for (const XmlElement* p : panels) {
    const std::string net = p->attr("id").substr(6);  // "panel-<name>"
    INFO(net);
    REQUIRE(points.count(net));
    for (const char* planner : {"vbs", "fbs", "greedy"}) {
      CHECK(p->all("circle", planner).size() == static_cast<size_t>(points[net][planner]));
      CHECK(p->all("polyline", "measured").size() >= 2);
    }
    CHECK(p->all("polyline", "predicted").size() == 3);
  }
}

TEST_CASE("plot bench-gate: per row a MAC bar and a time bar sized by their ratios, and the dense line",
          "[cli][plot]") {
  const nlohmann::json data = read_json(kData + "bench_gate.json");
  const auto svg = plot("bench-gate", kData + "bench_gate.json");
  const auto macs = svg->all("rect", "macs");
  const auto time = svg->all("rect", "time");
  const auto& rows = data["rows"];
  REQUIRE(macs.size() == rows.size());
  REQUIRE(time.size() == rows.size());
  const auto dense = svg->all("line", "dense");
  REQUIRE(dense.size() == 1);
  const double scale = number(dense[0], "x1") - number(macs[0], "x");  // width of a ratio of 1
  for (size_t i = 0; i < rows.size(); ++i) {
    CHECK(number(macs[i], "width") == Approx(scale * rows[i]["mac_ratio"].get<double>()).margin(0.02));
    CHECK(number(time[i], "width") == Approx(scale * rows[i]["time_ratio"].get<double>()).margin(0.02));
  }
  CHECK(svg->all("text", "row")[2]->text == "squeezenet1_1, paper's profile (ran 0.64)");
}

TEST_CASE("plot: escapes names, refuses inputs it cannot draw, naming the file", "[cli][plot]") {
  const std::string odd = scratch_file(
      "odd.json", R"({"batch": 2, "steps": [{"layer": "a<b & \"c\"", "first": 0, "count": 2}]})");
  const auto svg = plot("plan", odd);
  REQUIRE(svg->all("text", "layer").size() == 1);
  CHECK(svg->all("text", "layer")[0]->text == "a<b & \"c\"");

  FrugalRun r = run_frugal("plot memory " + sh_quote(kData + "plan_halfbatch.json") + " -o /dev/null");
  CHECK(r.code == 1);
  CHECK_THAT(r.output, Contains("plan_halfbatch.json: the plan has no per-layer memory"));
  r = run_frugal("plot bench-vbs " + sh_quote(odd) + " -o /dev/null");
  CHECK(r.code == 1);
  CHECK_THAT(r.output, Contains("odd.json: not bench-vbs results"));
  r = run_frugal("plot bench-gate " + sh_quote(odd) + " -o /dev/null");
  CHECK(r.code == 1);
  CHECK_THAT(r.output, Contains("odd.json: not bench-gate results"));
  r = run_frugal("plot pie " + sh_quote(odd));
  CHECK(r.code == 2);
  CHECK_THAT(r.output, Contains("unknown figure 'pie' (figures: plan, memory, bench-vbs, bench-gate)"));
  std::remove(odd.c_str());
}
