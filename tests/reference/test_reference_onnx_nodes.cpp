// Validates the float64 reference evaluator against the ONNX backend node tests
// (and PyTorch-converted layer tests) shipped by libonnx-testdata: every test
// directory for an op the evaluator supports must reproduce the stored outputs.
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "frugal/model/onnx_import.h"
#include "frugal/model/tensor_pb.h"
#include "reference.h"

using namespace frugal;

namespace {

const std::string kData = FRUGAL_ONNX_TESTDATA;

std::vector<std::string> list_dirs(const std::string& root) {
  std::vector<std::string> out;
  DIR* d = opendir(root.c_str());
  if (!d) return out;
  while (dirent* e = readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(n);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

bool file_exists(const std::string& p) {
  struct stat st;
  return stat(p.c_str(), &st) == 0;
}

bool starts_with(const std::string& s, const std::string& p) { return s.compare(0, p.size(), p) == 0; }
bool contains(const std::string& s, const std::string& p) { return s.find(p) != std::string::npos; }

// Node tests for the supported ops, minus variants outside the evaluator's scope
// (training mode, 3-D windows, pooling indices, optional/sequence types, and the
// "_expanded" forms that are written with other ops).
bool wanted_node_test(const std::string& n) {
  static const char* prefixes[] = {"test_conv_",
                                   "test_batchnorm_",
                                   "test_relu",
                                   "test_clip",
                                   "test_sigmoid",
                                   "test_mul",
                                   "test_add",
                                   "test_concat_",
                                   "test_maxpool_",
                                   "test_averagepool_",
                                   "test_globalaveragepool",
                                   "test_lrn",
                                   "test_gemm_",
                                   "test_matmul_",
                                   "test_flatten_",
                                   "test_reshape_",
                                   "test_softmax_",
                                   "test_dropout_default",
                                   "test_identity",
                                   "test_globalmaxpool",
                                   "test_constant_pad",
                                   "test_edge_pad",
                                   "test_reflect_pad",
                                   "test_upsample_nearest",
                                   "test_resize_",
                                   "test_sub",
                                   "test_div",
                                   "test_hardsigmoid",
                                   "test_hardswish",
                                   "test_leakyrelu",
                                   "test_greater",
                                   "test_where",
                                   "test_cast_FLOAT_to_DOUBLE",
                                   "test_cast_DOUBLE_to_FLOAT"};
  bool ok = false;
  for (const char* p : prefixes) ok = ok || starts_with(n, p);
  if (!ok) return false;
  // Resize: nearest only (linear and cubic interpolate; not in the evaluator), no crop.
  if (starts_with(n, "test_resize_") && (!contains(n, "nearest") || contains(n, "tf_crop"))) return false;
  for (const char* skip : {"training_mode", "_3d_", "with_argmax", "_expanded", "identity_opt",
                           "identity_sequence", "_old", "dropout_random", "_uint8", "FLOAT16"})
    if (contains(n, skip)) return false;
  return true;
}

bool wanted_pytorch_test(const std::string& n) {
  // These two are exported with Unsqueeze/Transpose, outside the op set.
  if (starts_with(n, "test_AvgPool1d") || n == "test_Linear_no_bias") return false;
  for (const char* p : {"test_Conv1d", "test_Conv2d", "test_AvgPool1d", "test_AvgPool2d", "test_MaxPool1d",
                        "test_MaxPool2d", "test_BatchNorm1d_3d_input_eval", "test_BatchNorm2d", "test_Linear",
                        "test_ReLU", "test_Sigmoid", "test_Softmax", "test_softmax_"})
    if (starts_with(n, p)) return true;
  return false;
}

// Runs one test directory; returns an empty string on success, else what failed.
std::string run_case(const std::string& dir) {
  const Graph g = load_onnx_file(dir + "/model.onnx");
  RefValues inputs;
  std::vector<std::string> real_inputs;
  for (const std::string& in : g.inputs)
    if (!g.is_initializer(in)) real_inputs.push_back(in);
  for (size_t i = 0; i < real_inputs.size(); ++i) {
    const std::string p = dir + "/test_data_set_0/input_" + std::to_string(i) + ".pb";
    if (!file_exists(p)) continue;  // an omitted optional input
    inputs[real_inputs[i]] = to_ref(load_tensor_pb(p));
  }
  const RefValues out = reference_run(g, inputs);
  std::string problems;
  for (size_t i = 0; i < g.outputs.size(); ++i) {
    const std::string p = dir + "/test_data_set_0/output_" + std::to_string(i) + ".pb";
    if (!file_exists(p)) continue;
    const RefTensor expected = to_ref(load_tensor_pb(p));
    const RefTensor& got = out.at(g.outputs[i]);
    if (got.dims != expected.dims) {
      problems += " output " + std::to_string(i) + " has the wrong dims;";
      continue;
    }
    // The stored outputs were computed in float32: allow its rounding, nothing more
    // (|got - expected| <= 1e-6 + 1e-5 |expected|, numpy.isclose style).
    double worst = 0.0;
    for (size_t k = 0; k < got.data.size(); ++k)
      worst = std::max(
          worst, std::fabs(got.data[k] - expected.data[k]) / (1e-6 + 1e-5 * std::fabs(expected.data[k])));
    if (worst > 1.0)
      problems += " output " + std::to_string(i) + " differs (max abs " +
                  std::to_string(max_abs_diff(got, expected)) + ", " + std::to_string(worst) +
                  "x the tolerance);";
  }
  return problems;
}

void run_suite(const std::string& root, bool (*wanted)(const std::string&), size_t at_least) {
  size_t ran = 0;
  for (const std::string& name : list_dirs(root)) {
    if (!wanted(name)) continue;
    INFO(root << "/" << name);
    std::string problems;
    CHECK_NOTHROW(problems = run_case(root + "/" + name));
    CHECK(problems == "");
    ++ran;
  }
  INFO("ran " << ran << " test directories under " << root);
  CHECK(ran >= at_least);
}

}  // namespace

TEST_CASE("reference evaluator reproduces the ONNX node tests of its ops", "[reference]") {
  run_suite(kData + "/node", wanted_node_test, 100);
}

TEST_CASE("reference evaluator reproduces the PyTorch-converted layer tests", "[reference]") {
  run_suite(kData + "/pytorch-converted", wanted_pytorch_test, 20);
}
