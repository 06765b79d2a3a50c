// The commands speak one language: every command's help names its options
// with their defaults (and the defaults are the ones used), the same words
// for the same things, output files checked before any work, errors in one
// line naming the file or option (tracebacks only for the user's own scripts
// or with --debug), and --json where people script.
#include <dirent.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>
#include <vector>

#include "run_frugal.h"
#include "tensor/npy.h"
#include "zoo/zoo.h"

using Catch::Matchers::Contains;

namespace {

std::vector<std::string> command_names() {
  std::vector<std::string> names;
  DIR* d = opendir(FRUGAL_SOURCE_DIR "/scripts");
  REQUIRE(d != nullptr);
  while (dirent* e = readdir(d)) {
    const std::string n = e->d_name;
    if (n.size() > 4 && n.compare(n.size() - 4, 4, ".lua") == 0 && n[0] != '_')
      names.push_back(n.substr(0, n.size() - 4));
  }
  closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

struct OptionHelp {
  std::string label;  // "-o, --output FILE"
  std::string text;   // the help, continuation lines joined
};

// The "options:" block of `frugal help CMD`, by option name.
std::map<std::string, OptionHelp> options_of(const std::string& help) {
  std::map<std::string, OptionHelp> out;
  std::istringstream in(help.substr(help.find("\noptions:\n") + 10));
  std::string line, current;
  const std::regex row(R"(^  ((?:-\w, )?--([\w-]+)(?: \S+)?)  +(.*)$)");
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_match(line, m, row)) {
      current = m[2].str();
      out[current] = {m[1].str(), m[3].str()};
    } else if (!current.empty() && line.rfind("      ", 0) == 0) {
      out[current].text += " " + line.substr(line.find_first_not_of(' '));
    } else {
      current.clear();
    }
  }
  return out;
}

}  // namespace

TEST_CASE("consistency: every command's help gives each option's default, in one vocabulary", "[cli]") {
  const std::vector<std::string> names = command_names();
  REQUIRE(names.size() >= 14);
  for (const std::string& name : names) {
    INFO(name);
    const FrugalRun r = run_frugal("help " + name);
    REQUIRE(r.code == 0);
    CHECK_THAT(r.output, Contains("frugal " + name + ": "));  // the summary line
    CHECK_THAT(r.output, Contains("usage: frugal " + name));
    const auto options = options_of(r.output);
    REQUIRE(options.count("help"));
    for (const auto& [option, help] : options) {
      INFO(option << ": " << help.label << "  " << help.text);
      const bool takes_value = help.label.find("--" + option + " ") != std::string::npos;
      if (takes_value) {
        CHECK((help.text.find("(default: ") != std::string::npos ||
               help.text.find("(required") != std::string::npos ||
               help.text.find("required") != std::string::npos));
      }
      CHECK(option != "repeats");                                               // --repeat everywhere
      if (option == "output") CHECK(help.label.rfind("-o, --output", 0) == 0);  // -o for every output
      if (help.label.find("--" + option + " L") != std::string::npos &&
          option.find("batch") != std::string::npos)
        CHECK(option == "batches");  // a list of batch sizes is --batches; --batch N is a request
      if (option == "batch") CHECK(help.label == "--batch N");
    }
  }
  // Progress can be silenced where there is progress; --json where people script.
  for (const char* name :
       {"run", "profile", "workflow", "zoo", "bench-fold", "bench-vbs", "bench-costs", "bench-vulkan"})
    CHECK_THAT(run_frugal(std::string("help ") + name).output, Contains("--quiet"));
  for (const char* name : {"run", "info", "plugins", "zoo", "plan", "devices"})
    CHECK_THAT(run_frugal(std::string("help ") + name).output, Contains("--json"));
}

TEST_CASE("consistency: the defaults the help states are the ones used", "[cli]") {
  const auto run_help = options_of(run_frugal("help run").output);
  std::smatch m;
  REQUIRE(std::regex_search(run_help.at("repeat").text, m, std::regex(R"(\(default: (\d+)\))")));
  const int repeats = std::stoi(m[1].str());
  const FrugalRun r = run_frugal("run zoo:toy_tiny --json --quiet");
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.output);
  CHECK(j["times"].size() == static_cast<size_t>(repeats));
  CHECK(j["batch"] == 1);  // "--batch N ... (default: 1; ...)"
  CHECK_THAT(run_help.at("batch").text, Contains("(default: 1;"));
  CHECK(j["executor"] == "cpu");
  CHECK_THAT(run_help.at("executor").text, Contains("(default: cpu)"));
  // A default model is named as such in the help and in the output.
  CHECK_THAT(run_frugal("help run").output, Contains("(default: zoo:resnet18)"));
  CHECK_THAT(run_frugal("help workflow").output, Contains("(default: zoo:alexnet)"));
  const FrugalRun dflt = run_frugal("run --repeat 1 --quiet");
  REQUIRE(dflt.code == 0);
  CHECK_THAT(dflt.output, Contains("model       zoo:resnet18 (the default; give MODEL.onnx or zoo:NAME)"));
  // --schedule: its default as stated; "whole" said so in the output; an unknown order refused by name.
  CHECK_THAT(run_help.at("schedule").text, Contains("(default: cache)"));
  const FrugalRun whole = run_frugal("run zoo:toy_tiny --batch 4 --schedule whole --repeat 1 --quiet");
  REQUIRE(whole.code == 0);
  CHECK_THAT(whole.output, Contains("batch       4 (random input, seed 0), whole batch layer by layer"));
  const FrugalRun bad = run_frugal("run zoo:toy_tiny --schedule fast --quiet");
  CHECK(bad.code != 0);
  CHECK_THAT(bad.output, Contains("--schedule"));
  // --weight-storage: fp32 by default; fp16 is the vulkan executor's, refused with another.
  CHECK_THAT(run_help.at("weight-storage").text, Contains("(default: fp32)"));
  const FrugalRun half = run_frugal("run zoo:toy_tiny --weight-storage fp16 --quiet");
  CHECK(half.code != 0);
  CHECK_THAT(half.output, Contains("--weight-storage fp16 is the vulkan executor's option"));
}

TEST_CASE("consistency: 'parameters' is the same number in zoo NAME -o, zoo --list, info and workflow",
          "[cli]") {
  const std::string onnx = scratch_file("params.onnx", "");
  const int64_t learned = frugal::torchvision_parameter_count(frugal::build_zoo_model("toy_tiny", 1));
  const int64_t stored = frugal::build_zoo_model("toy_tiny", 1).parameter_count();
  REQUIRE(learned != stored);  // BatchNorm statistics: the two counts differ here
  CHECK_THAT(
      run_frugal("zoo toy_tiny -o " + sh_quote(onnx)).output,
      Contains(std::to_string(learned) + " parameters (" + std::to_string(stored) + " initializer values)"));
  CHECK_THAT(run_frugal("info zoo:toy_tiny").output,
             Contains("parameters  " + std::to_string(learned) + " learned"));
  const nlohmann::json info = nlohmann::json::parse(run_frugal("info zoo:toy_tiny --json").output);
  CHECK(info["parameters"] == learned);
  CHECK(info["initializer_values"] == stored);
  std::remove(onnx.c_str());
}

TEST_CASE("consistency: output files are checked before the work, naming the option", "[cli]") {
  const std::string bad = "/nonexistent-frugal-dir/x";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"workflow zoo:toy_tiny --report " + bad + ".json", "--report: cannot write " + bad + ".json"},
      {"workflow zoo:toy_tiny --save " + bad, "--save: cannot write " + bad + "_input.npy"},
      {"profile zoo:toy_tiny -o " + bad + ".json", "--output: cannot write " + bad + ".json"},
      {"run zoo:toy_tiny -o " + bad + ".npy", "--output: cannot write " + bad + ".npy"},
      {"run zoo:toy_tiny --output " + bad + ".npy", "--output: cannot write " + bad + ".npy"},
      {"fold zoo:toy_tiny " + bad + ".onnx", "OUT: cannot write " + bad + ".onnx"},
      {"fold zoo:toy_tiny ok.onnx --report " + bad + ".json", "--report: cannot write " + bad + ".json"},
      {"zoo toy_tiny -o " + bad + ".onnx", "--output: cannot write " + bad + ".onnx"},
      {"plot plan x.json -o " + bad + ".svg", "--output: cannot write " + bad + ".svg"},
  };
  for (const auto& [args, message] : cases) {
    INFO(args);
    const FrugalRun r = run_frugal(args);
    CHECK(r.code == 2);
    CHECK_THAT(r.output, Contains("frugal: " + message + ": No such file or directory"));
    CHECK_THAT(r.output, !Contains("frugal workflow: loading"));  // no work started
    CHECK_THAT(r.output, !Contains("1 fold"));
  }
}

TEST_CASE("consistency: errors are one line naming the file or option; tracebacks with --debug", "[cli]") {
  const FrugalRun missing = run_frugal("info nothere.onnx");
  CHECK(missing.code == 1);
  CHECK(missing.output == "frugal: cannot open ONNX model 'nothere.onnx': No such file or directory\n");
  const FrugalRun debug = run_frugal("info nothere.onnx --debug");
  CHECK(debug.code == 1);
  CHECK_THAT(debug.output, Contains("stack traceback:"));
  CHECK_THAT(run_frugal("--debug info nothere.onnx").output, Contains("stack traceback:"));

  // The planner's option names are the command's.
  const std::string costs = scratch_file("costs.json", "");
  REQUIRE(run_frugal("profile zoo:toy_tiny --upto 2 --repeat 1 --quiet -o " + sh_quote(costs)).code == 0);
  const FrugalRun unit = run_frugal("plan --costs " + sh_quote(costs) + " --budget 1MB --batch 2 --unit 1");
  CHECK(unit.code == 1);
  CHECK_THAT(unit.output, Contains("choose a larger --unit"));
  CHECK_THAT(unit.output, !Contains("unit_bytes"));
  CHECK_THAT(unit.output, !Contains(".so)"));  // no plugin file and call in the message

  // A garbage plan file is named.
  const std::string garbage = scratch_file("garbage.json", "garbage");
  for (const std::string& args : {"run zoo:toy_tiny --quiet --plan " + sh_quote(garbage),
                                  "plan --costs " + sh_quote(costs) + " --show " + sh_quote(garbage)}) {
    const FrugalRun r = run_frugal(args);
    CHECK(r.code == 1);
    CHECK_THAT(r.output, Contains("frugal: " + garbage + ": not valid JSON"));
  }
  const std::string not_plan = scratch_file("not_plan.json", "{\"layers\": []}");
  CHECK_THAT(run_frugal("run zoo:toy_tiny --quiet --plan " + sh_quote(not_plan)).output,
             Contains("--plan " + not_plan + " is not a plan"));

  // Executor errors without "executor:run:" or "run: run:" in front.
  const FrugalRun budget = run_frugal("run zoo:toy_tiny --quiet --budget 100");
  CHECK(budget.code == 1);
  CHECK_THAT(budget.output, Contains("frugal: the budget is too small"));
  CHECK_THAT(budget.output, !Contains("executor:run:"));
  CHECK_THAT(budget.output, !Contains("run: run:"));
  CHECK_THAT(budget.output, !Contains("stack traceback"));

  // The user's own script keeps its traceback.
  const std::string script = scratch_file("mine.lua", "local function f() error('mine') end\nf()\n");
  const FrugalRun own = run_frugal(sh_quote(script));
  CHECK(own.code == 1);
  CHECK_THAT(own.output, Contains("stack traceback:"));
  for (const auto& p : {costs, garbage, not_plan, script}) std::remove(p.c_str());
}

TEST_CASE("consistency: --json for run, info and plugins", "[cli]") {
  const std::string y = scratch_file("y.npy", "");
  const FrugalRun r = run_frugal("run zoo:toy_tiny --batch 2 --repeat 1 --quiet --json -o " + sh_quote(y));
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.output);
  const frugal::Tensor out = frugal::load_npy(y);
  REQUIRE(j["outputs"].size() == 1);
  CHECK(j["outputs"][0]["shape"] == nlohmann::json(out.dims));
  // The top classes of sample 1 are the output's, in order.
  const std::vector<float> row(out.data.begin(), out.data.begin() + out.dims[1]);
  std::vector<int> order(row.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return row[a] > row[b]; });
  const nlohmann::json& top = j["outputs"][0]["top"];
  REQUIRE(top.size() == std::min<size_t>(5, row.size()));
  for (size_t k = 0; k < top.size(); ++k) {
    CHECK(top[k]["class"] == order[k]);
    CHECK(top[k]["score"].get<double>() == Approx(row[order[k]]));
  }
  CHECK(j["report"]["peak_bytes"].get<int64_t>() > 0);
  CHECK(j["seconds"].get<double>() > 0);

  const nlohmann::json info = nlohmann::json::parse(run_frugal("info zoo:toy_tiny --batch 2 --json").output);
  int64_t sum = 0;
  for (const auto& l : info["layers"])
    if (l.contains("macs")) sum += l["macs"].get<int64_t>();
  CHECK(info["total_macs"] == sum);
  CHECK(sum > 0);
  CHECK(info["layers"].size() == frugal::build_zoo_model("toy_tiny", 1).nodes.size());

  const nlohmann::json plugins = nlohmann::json::parse(run_frugal("plugins --json").output);
  bool cpu = false;
  for (const auto& p : plugins["plugins"]) cpu = cpu || (p["name"] == "cpu" && p["kind"] == "executor");
  CHECK(cpu);
  std::remove(y.c_str());
}

TEST_CASE("tensors: a table is values, x[{i, j}] an element, and print shows shape and values", "[cli]") {
  const FrugalRun r =
      run_frugal("-e " + sh_quote("print(frugal.tensor({1,2,3})); print(frugal.tensor(2,2)[{1,1}]); "
                                  "print(frugal.tensor{{1,2},{3,4}}:size())"));
  CHECK(r.code == 0);
  CHECK(r.output == "  1\n  2\n  3\n[frugal.FloatTensor of size 3]\n0.0\n2x2\n");
}
