// `frugal info` on ONNX backend test models: output shapes and MACs of the conv
// node against the convolution formulas evaluated here with the sizes the ONNX
// test generator uses; bad files and options.
#include <fstream>
#include <sstream>
#include <vector>

#include "../lua/unknown_ops_model.h"
#include "run_frugal.h"

using Catch::Matchers::Contains;

namespace {

const std::string kNodes = FRUGAL_ONNX_TESTDATA "/node";

// The layers-table row of the node with op `op` (first match).
std::string layer_row(const std::string& output, const std::string& op) {
  std::istringstream in(output);
  std::string line;
  bool in_layers = false;
  while (std::getline(in, line)) {
    if (line.rfind("layers", 0) == 0)
      in_layers = true;
    else if (in_layers && line.find("  " + op + "  ") != std::string::npos)
      return line;
  }
  return "";
}

// "total MACs  4,089,184,256 (...)" -> 4089184256
int64_t total_macs(const std::string& output) {
  size_t at = output.find("total MACs  ");
  REQUIRE(at != std::string::npos);
  int64_t v = 0;
  for (size_t i = at + 12; i < output.size() && (isdigit(output[i]) || output[i] == ','); ++i)
    if (output[i] != ',') v = v * 10 + (output[i] - '0');
  return v;
}

std::string with_commas(int64_t v) {
  std::string s = std::to_string(v);
  for (int i = static_cast<int>(s.size()) - 3; i > 0; i -= 3) s.insert(static_cast<size_t>(i), ",");
  return s;
}

int64_t conv_out(int64_t in, int64_t k, int64_t pad_sum, int64_t stride) {
  return (in + pad_sum - k) / stride + 1;
}

}  // namespace

TEST_CASE("info: conv with strides and padding", "[cli][info]") {
  // ONNX's test_conv_with_strides_padding: x [1,1,7,5], W [1,1,3,3], strides 2, pads 1.
  // A model given where a command belongs is a usage error with a hint.
  FrugalRun r = run_frugal(kNodes + "/test_conv_with_strides_padding/model.onnx");
  CHECK(r.code == 2);
  CHECK_THAT(r.output, Contains("is a model, not a script; try 'frugal info"));
  r = run_frugal("info " + kNodes + "/test_conv_with_strides_padding/model.onnx");
  REQUIRE(r.code == 0);
  int64_t ho = conv_out(7, 3, 2, 2), wo = conv_out(5, 3, 2, 2);
  int64_t macs = 1 /*N*/ * 1 /*M*/ * ho * wo * 1 /*C*/ * 3 * 3;
  std::string row = layer_row(r.output, "Conv");
  INFO(r.output);
  CHECK_THAT(row, Contains("[1, 1, " + std::to_string(ho) + ", " + std::to_string(wo) + "]"));
  CHECK(row.substr(row.find_last_not_of(' ') + 1 - std::to_string(macs).size()) == std::to_string(macs));
  CHECK(total_macs(r.output) == macs);
  CHECK_THAT(r.output, Contains("x  float32  [1, 1, 7, 5]"));
  CHECK_THAT(r.output, Contains("W  float32  [1, 1, 3, 3]"));
  CHECK_THAT(r.output, Contains("Conv  1"));  // op histogram
  CHECK(r.output.find("warning") == std::string::npos);
}

TEST_CASE("info: conv with padding, and --batch", "[cli][info]") {
  // test_basic_conv_with_padding: x [1,1,5,5], W [1,1,3,3], pads 1 -> y [1,1,5,5].
  const std::string model = kNodes + "/test_basic_conv_with_padding/model.onnx";
  FrugalRun r = run_frugal("info " + model);
  REQUIRE(r.code == 0);
  int64_t ho = conv_out(5, 3, 2, 1), wo = conv_out(5, 3, 2, 1);
  CHECK_THAT(layer_row(r.output, "Conv"), Contains("[1, 1, 5, 5]"));
  CHECK(total_macs(r.output) == ho * wo * 9);
  // --batch 4 sets dim 0 of every graph input: here W is an input too, so the
  // conv sees N = 4 samples and M = 4 filters.
  FrugalRun b = run_frugal("info " + model + " --batch 4");
  REQUIRE(b.code == 0);
  CHECK_THAT(layer_row(b.output, "Conv"), Contains("[4, 4, 5, 5]"));
  CHECK(total_macs(b.output) == 4 * 4 * ho * wo * 9);
  CHECK_THAT(b.output, Contains("at batch 4"));
}

TEST_CASE("info: zoo model MACs scale with the batch", "[cli][info]") {
  FrugalRun one = run_frugal("info zoo:toy_branched");
  FrugalRun three = run_frugal("info zoo:toy_branched --batch=3");
  REQUIRE(one.code == 0);
  REQUIRE(three.code == 0);
  CHECK(total_macs(one.output) > 0);
  CHECK(total_macs(three.output) == 3 * total_macs(one.output));
  CHECK_THAT(one.output, Contains("[N, 3,"));  // declared input keeps its symbol
  CHECK_THAT(three.output, Contains("at batch 3"));
  CHECK_THAT(one.output, Contains("total MACs  " + with_commas(total_macs(one.output))));
}

TEST_CASE("info: all unknown ops in one warning, the rest still printed", "[cli][info]") {
  std::string path = scratch_file("unknown.onnx", "");
  write_unknown_ops_model(path);
  FrugalRun r = run_frugal("info " + sh_quote(path));
  CHECK(r.code == 0);
  size_t w = r.output.find("warning: 2 node(s) use ops frugal does not know");
  REQUIRE(w != std::string::npos);
  size_t foo = r.output.find("FooOp (node 'foo')", w), bar = r.output.find("BarOp", w);
  CHECK(foo != std::string::npos);
  CHECK(bar != std::string::npos);
  CHECK_THAT(r.output, Contains("parameters  6"));
  CHECK_THAT(layer_row(r.output, "Relu"), Contains("relu"));
  CHECK_THAT(r.output, Contains("total MACs"));
  std::remove(path.c_str());
}

TEST_CASE("info: missing, corrupted and truncated files name the file and exit 1", "[cli][info]") {
  std::string missing = std::string(FRUGAL_TEST_BINARY_DIR) + "/no-such-model.onnx";
  FrugalRun m = run_frugal("info " + sh_quote(missing));
  CHECK(m.code == 1);
  CHECK_THAT(m.output, Contains(missing));

  std::string garbage =
      scratch_file("garbage.onnx", std::string("\x08\x07\x12\xff\xff\xff\xff\x0fgarbage", 16));
  FrugalRun g = run_frugal("info " + sh_quote(garbage));
  CHECK(g.code == 1);
  CHECK_THAT(g.output, Contains(garbage));

  std::ifstream src(kNodes + "/test_conv_with_strides_padding/model.onnx", std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(src)), {});
  REQUIRE(bytes.size() > 40);
  std::string truncated = scratch_file("truncated.onnx", bytes.substr(0, bytes.size() / 2));
  FrugalRun t = run_frugal("info " + sh_quote(truncated));
  CHECK(t.code == 1);
  CHECK_THAT(t.output, Contains(truncated));
  for (const auto& p : {garbage, truncated}) std::remove(p.c_str());
}

TEST_CASE("info: bad arguments are usage errors (exit 2)", "[cli][info]") {
  FrugalRun none = run_frugal("info");
  CHECK(none.code == 2);
  CHECK_THAT(none.output, Contains("missing MODEL (an ONNX file"));
  CHECK_THAT(none.output, Contains("usage: frugal info MODEL [options]"));
  FrugalRun opt = run_frugal("info zoo:toy_tiny --bogus");
  CHECK(opt.code == 2);
  CHECK_THAT(opt.output, Contains("unknown option '--bogus' (known: --batch, --json, --help)"));
  CHECK(run_frugal("info zoo:toy_tiny --batch").code == 2);
  CHECK_THAT(run_frugal("info zoo:toy_tiny --batch x").output, Contains("--batch needs an integer, got 'x'"));
  CHECK_THAT(run_frugal("info zoo:toy_tiny --batch 0").output, Contains("--batch must be >= 1"));
  CHECK(run_frugal("info zoo:toy_tiny extra").code == 2);
  FrugalRun help = run_frugal("info --help");
  CHECK(help.code == 0);
  CHECK_THAT(help.output, Contains("usage: frugal info"));
}
