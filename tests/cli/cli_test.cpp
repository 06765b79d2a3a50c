// The frugal executable: dispatch, help, version, script errors, weird inputs.
#include <fstream>
#include <sstream>
#include <vector>

#include "run_frugal.h"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {
// The summary in a script's first line "-- frugal CMD: summary", read here directly.
std::string summary_of(const std::string& cmd) {
  std::ifstream f(std::string(FRUGAL_SOURCE_DIR) + "/scripts/" + cmd + ".lua");
  std::string line;
  std::getline(f, line);
  std::string prefix = "-- frugal " + cmd + ": ";
  REQUIRE(line.rfind(prefix, 0) == 0);
  return line.substr(prefix.size());
}
}  // namespace

TEST_CASE("cli: --version", "[cli]") {
  FrugalRun r = run_frugal("--version");
  CHECK(r.code == 0);
  CHECK(r.output == "frugal " FRUGAL_VERSION "\n");
}

TEST_CASE("cli: --help lists every script with its summary", "[cli]") {
  FrugalRun r = run_frugal("--help");
  CHECK(r.code == 0);
  CHECK_THAT(r.output, Contains("usage: frugal COMMAND"));
  // Names are padded to the longest command name, which grows as commands are added.
  auto listed = [&](const std::string& cmd) {
    const std::string summary = summary_of(cmd);
    std::istringstream lines(r.output);
    for (std::string l; std::getline(lines, l);)
      if (l.rfind("  " + cmd + "  ", 0) == 0 && l.size() > summary.size() &&
          l.compare(l.size() - summary.size(), summary.size(), summary) == 0)
        return true;
    return false;
  };
  CHECK(listed("info"));
  CHECK(listed("plugins"));
  CHECK_THAT(r.output, Contains("MB = 10^6 bytes"));
  CHECK_THAT(r.output, Contains("MiB = 2^20 bytes"));
  CHECK(run_frugal("-h").output == r.output);
  CHECK(run_frugal("help").output == r.output);
  // No arguments: the same help, as a usage error.
  FrugalRun none = run_frugal("");
  CHECK(none.code == 2);
  CHECK_THAT(none.output, Contains("usage: frugal COMMAND"));
}

TEST_CASE("cli: help CMD prints the script's usage block", "[cli]") {
  FrugalRun r = run_frugal("help info");
  CHECK(r.code == 0);
  CHECK_THAT(r.output, StartsWith("frugal info: " + summary_of("info")));
  CHECK_THAT(r.output, Contains("usage: frugal info MODEL [options]"));
  CHECK_THAT(r.output, Contains("--batch N"));
  CHECK_THAT(r.output, Contains("--batch N"));
  FrugalRun bad = run_frugal("help nosuchcommand");
  CHECK(bad.code == 2);
  CHECK_THAT(bad.output, Contains("unknown command 'nosuchcommand'"));
  CHECK(run_frugal("help ../etc/passwd").code == 2);
}

TEST_CASE("cli: unknown commands and options exit 2 with a suggestion", "[cli]") {
  FrugalRun r = run_frugal("inf model.onnx");
  CHECK(r.code == 2);
  CHECK_THAT(r.output, Contains("unknown command 'inf'"));
  CHECK_THAT(r.output, Contains("Did you mean 'info'?"));
  CHECK_THAT(r.output, Contains("frugal --help"));
  FrugalRun typo = run_frugal("plugnis");
  CHECK(typo.code == 2);
  CHECK_THAT(typo.output, Contains("Did you mean 'plugins'?"));
  FrugalRun far = run_frugal("zzzzzzzz");
  CHECK(far.code == 2);
  CHECK(far.output.find("Did you mean") == std::string::npos);
  CHECK(run_frugal("--bogus").code == 2);
  FrugalRun missing = run_frugal("no_such_script.lua");
  CHECK(missing.code == 2);
  CHECK_THAT(missing.output, Contains("cannot open script 'no_such_script.lua'"));
}

TEST_CASE("cli: a script gets arg and ..., and its exit status", "[cli]") {
  std::string path = scratch_file("args.lua", "print(arg[0] == ..., select('#', ...), arg[1], arg[2])\n");
  std::string p2 = scratch_file("exit.lua", "os.exit(5)\n");
  FrugalRun r = run_frugal(sh_quote(path) + " a 'b c'");
  CHECK(r.code == 0);
  CHECK(r.output == "false\t2\ta\tb c\n");
  CHECK(run_frugal(sh_quote(p2)).code == 5);
  FrugalRun e = run_frugal("-e " + sh_quote("print(#arg, arg[1], frugal.version)") + " x");
  CHECK(e.code == 0);
  CHECK(e.output == "1\tx\t" FRUGAL_VERSION "\n");
  std::remove(path.c_str());
  std::remove(p2.c_str());
}

TEST_CASE("cli: a failing script exits 1 with file:line: message and a traceback", "[cli]") {
  std::string path = scratch_file("fail.lua",
                                  "print('before')\n"
                                  "local function check(x)\n"
                                  "  if x > 1 then error('value too large: ' .. x) end\n"
                                  "end\n"
                                  "check(5)\n");
  FrugalRun r = run_frugal(sh_quote(path));
  CHECK(r.code == 1);
  CHECK_THAT(r.output, StartsWith("before\n"));  // output before the error is kept
  CHECK_THAT(r.output, Contains("frugal: " + path + ":3: value too large: 5"));
  CHECK_THAT(r.output, Contains("stack traceback:"));
  CHECK_THAT(r.output, Contains(path + ":3: in local 'check'"));
  CHECK_THAT(r.output, Contains(path + ":5: in main chunk"));
  std::remove(path.c_str());
}

TEST_CASE("cli: weird inputs to bindings are Lua errors, never crashes", "[cli]") {
  struct Case {
    const char* code;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"frugal.tensor(-1)", "sizes must be >= 0"},
      {"frugal.tensor(1e15, 1e15)", "too many elements"},
      {"frugal.tensor(3e9, 3e9)", "more than this machine's"},
      {"frugal.tensor('x')", "must be sizes or a table of values"},
      {"frugal.tensor()", "give sizes or values"},
      {"frugal.tensor(3)[7] = 1", "out of range"},
      {"frugal.tensor(3):get(1, 2)", "got 2 indices"},
      {"frugal.tensor(3):get(math.maxinteger)", "out of range"},
      {"frugal.tensor(3):get(math.mininteger)", "out of range"},
      {"frugal.tensor(2, 2):totable()[9][1] = 0", "attempt to index a nil value"},
      {"frugal.tensor({{1}, {2, 3}})", "expected 1"},
      {"frugal.tensor(nil)", "must be sizes or a table of values"},
      {"frugal.load(nil)", "string expected"},
      {"frugal.load('')", "frugal.load:"},
      {"frugal.load('/')", "frugal.load:"},
      {"frugal.load_npy('/')", "frugal.load_npy:"},
      {"frugal.load_npy(42)", "cannot open '42'"},
      {"frugal.zoo(nil)", "string expected"},
      {"frugal.zoo('toy_tiny', 5)", "options must be a table, got number"},
      {"frugal.zoo('toy_tiny', {seed = 'x'})", "option 'seed' must be an integer"},
      {"frugal.random_input(frugal.zoo('toy_tiny'), -5)", "batch must be >= 1"},
      {"frugal.random_input(frugal.zoo('toy_tiny'), 1, -1)", "seed must be >= 0"},
      {"frugal.zoo('toy_tiny'):infer_shapes{input = {1e12, 1e12, 1e12, 1e12}}", "model:infer_shapes:"},
      {"frugal.zoo('toy_tiny'):node(nil)", "string expected"},
      {"frugal.parse_bytes('lots')", "is not a memory size"},
      {"frugal.parse_bytes('99999999999TB')", "too large"},
      {"frugal.format_bytes('x')", "number expected"},
      {"frugal.tensor(2):save_npy('/nonexistent-dir/x.npy')", "cannot write"},
      {"local t = frugal.tensor(2); t.fill(nil, 1)", "frugal.FloatTensor expected"},
      {"frugal.plugins(1, 2, 3).x.y = 1", "attempt to index a nil value"},
      {"frugal.load_plugin('/nonexistent.so') .x = 1", "attempt to index a nil value"},
  };
  std::string script;
  for (const Case& c : cases) {
    std::string path = scratch_file("weird.lua", std::string(c.code) + "\n");
    FrugalRun r = run_frugal(sh_quote(path));
    INFO(c.code << "\n" << r.output);
    CHECK(r.code == 1);
    CHECK_THAT(r.output, Contains(path + ":1:"));
    CHECK_THAT(r.output, Contains(c.message));
    std::remove(path.c_str());
  }
}

TEST_CASE("cli: plugins lists folders and refusals", "[cli]") {
  FrugalRun r = run_frugal("plugins", "FRUGAL_PLUGIN_PATH=/nonexistent-frugal-plugins");
  CHECK(r.code == 0);
  CHECK_THAT(r.output, Contains("searched: " FRUGAL_TEST_BINARY_DIR "/plugins, /nonexistent-frugal-plugins"));
  CHECK_THAT(r.output, Contains("refused:"));
  CHECK_THAT(r.output, Contains("/nonexistent-frugal-plugins: plugin folder does not exist"));
  // A file that is not a plugin is refused with its name; the command still succeeds.
  std::string dir = std::string(FRUGAL_TEST_BINARY_DIR) + "/cli_test_plugins_" + std::to_string(getpid());
  REQUIRE(system(("mkdir -p " + sh_quote(dir)).c_str()) == 0);
  std::ofstream(dir + "/broken.so") << "not an ELF file";
  FrugalRun b = run_frugal("plugins", "FRUGAL_PLUGIN_PATH=" + sh_quote(dir));
  CHECK(b.code == 0);
  CHECK_THAT(b.output, Contains(dir + "/broken.so: not a loadable shared object"));
  REQUIRE(system(("rm -rf " + sh_quote(dir)).c_str()) == 0);
}

TEST_CASE("cli: the Torch-style script test in tests/lua passes", "[cli]") {
  FrugalRun r = run_frugal(sh_quote(std::string(FRUGAL_SOURCE_DIR) + "/tests/lua/torch_style.lua"));
  CHECK(r.code == 0);
  CHECK(r.output == "torch_style: ok\n");
}
