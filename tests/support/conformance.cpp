#include "conformance.h"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include "frugal/error.h"
#include "frugal/model/onnx_export.h"
#include "frugal/model/onnx_import.h"
#include "frugal/model/tensor_pb.h"

namespace exec_test {

namespace fs = std::filesystem;

namespace {

// The ops both executors run (kept here independently of the plugins' own tables).
const std::set<std::string> kSupportedOps = {
    "Conv",          "BatchNormalization",
    "Relu",          "Clip",
    "Sigmoid",       "HardSigmoid",
    "HardSwish",     "LeakyRelu",
    "Mul",           "Add",
    "Sub",           "Div",
    "Concat",        "MaxPool",
    "AveragePool",   "GlobalAveragePool",
    "GlobalMaxPool", "LRN",
    "Gemm",          "MatMul",
    "Flatten",       "Reshape",
    "Softmax",       "Dropout",
    "Identity",      "Constant",
    "Greater",       "GreaterOrEqual",
    "Where",         "Cast",
    "Resize",
};

// Node inputs this executor needs as constants (weights, shapes, bounds). In the
// node tests they are graph inputs with data in input_N.pb; such inputs are
// turned into initializers before the model reaches the plugin.
const std::map<std::string, std::set<size_t>> kParameterSlots = {
    {"Conv", {1, 2}},    {"BatchNormalization", {1, 2, 3, 4}},
    {"Clip", {1, 2}},    {"Reshape", {1}},
    {"Dropout", {1, 2}}, {"Resize", {1, 2, 3}},
    {"Where", {0}}};

// Node tests of supported ops that the plugin refuses (FRUGAL_ERR_UNSUPPORTED),
// and why. Anything refused and not listed here fails the test.
const std::map<std::string, std::string> kExpectedSkips = {
    {"test_maxpool_3d_default", "3-D pooling"},
    {"test_averagepool_3d_default", "3-D pooling"},
    {"test_training_dropout", "training mode"},
    {"test_training_dropout_default", "training mode"},
    {"test_training_dropout_zero_ratio", "training mode"},
    {"test_batchnorm_epsilon_training_mode", "training mode (running statistics outputs)"},
    {"test_batchnorm_example_training_mode", "training mode (running statistics outputs)"},
    {"test_constant", "the graph output is a constant: no layer computes it"},
    {"test_dropout_default_mask", "the mask output (executors compute the first output only)"},
    {"test_dropout_default_mask_ratio", "the mask output (executors compute the first output only)"},
    {"test_training_dropout_default_mask", "training mode, the mask output"},
    {"test_training_dropout_mask", "training mode, the mask output"},
    {"test_training_dropout_zero_ratio_mask", "training mode, the mask output"},
    {"test_resize_downsample_scales_cubic", "Resize: cubic mode"},
    {"test_resize_downsample_scales_cubic_A_n0p5_exclude_outside", "Resize: cubic mode"},
    {"test_resize_downsample_scales_cubic_align_corners", "Resize: cubic mode"},
    {"test_resize_downsample_scales_linear", "Resize: linear mode"},
    {"test_resize_downsample_scales_linear_align_corners", "Resize: linear mode"},
    {"test_resize_downsample_sizes_cubic", "Resize: cubic mode"},
    {"test_resize_downsample_sizes_linear_pytorch_half_pixel", "Resize: linear mode"},
    {"test_resize_tf_crop_and_resize", "Resize: linear mode, tf_crop_and_resize"},
    {"test_resize_upsample_scales_cubic", "Resize: cubic mode"},
    {"test_resize_upsample_scales_cubic_A_n0p5_exclude_outside", "Resize: cubic mode"},
    {"test_resize_upsample_scales_cubic_align_corners", "Resize: cubic mode"},
    {"test_resize_upsample_scales_cubic_asymmetric", "Resize: cubic mode"},
    {"test_resize_upsample_scales_linear", "Resize: linear mode"},
    {"test_resize_upsample_scales_linear_align_corners", "Resize: linear mode"},
    {"test_resize_upsample_sizes_cubic", "Resize: cubic mode"},
};

bool close(float got, float want) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::fabs(double(got) - double(want)) <= 1e-7 + 1e-3 * std::fabs(double(want));
}

std::vector<fs::path> numbered(const fs::path& dir, const std::string& prefix) {
  std::vector<fs::path> v;
  for (int i = 0;; ++i) {
    fs::path p = dir / (prefix + std::to_string(i) + ".pb");
    if (!fs::exists(p)) break;
    v.push_back(p);
  }
  return v;
}

struct Outcome {
  enum Kind { Passed, Skipped, Failed } kind;
  std::string reason;
};

Outcome run_node_test(const fs::path& dir, const MakeExecutor& make, const AfterRun& after_run) {
  frugal::Graph g;
  try {
    g = frugal::load_onnx_file((dir / "model.onnx").string());
  } catch (const frugal::Error& e) {  // sequences, subgraphs, strings...: outside any executor
    return {Outcome::Skipped, std::string("the importer refuses the model: ") + e.what()};
  }
  for (const frugal::Node& n : g.nodes)
    if (!kSupportedOps.count(n.op_type) || !(n.domain.empty() || n.domain == "ai.onnx"))
      return {Outcome::Skipped, "unsupported op " + n.op_type};
  const fs::path data = dir / "test_data_set_0";
  const std::vector<fs::path> in_files = numbered(data, "input_"), out_files = numbered(data, "output_");
  if (in_files.size() != g.inputs.size())
    return {Outcome::Failed, "input files do not match the graph inputs"};

  // Inline parameter inputs as initializers; the rest are run-time inputs.
  std::vector<HostTensor> inputs;
  std::vector<std::string> inlined;
  const std::vector<std::string> graph_inputs = g.inputs;
  for (size_t i = 0; i < graph_inputs.size(); ++i) {
    const std::string& name = graph_inputs[i];
    frugal::TensorDesc t = frugal::load_tensor_pb(in_files[i].string());
    bool parameter = false;
    for (const frugal::Node& n : g.nodes) {
      auto slots = kParameterSlots.find(n.op_type);
      for (size_t k = 0; k < n.inputs.size(); ++k)
        if (n.inputs[k] == name && slots != kParameterSlots.end() && slots->second.count(k)) parameter = true;
    }
    if (parameter) {
      g.add_initializer(name, t.dtype, frugal::known_dims(t.shape), t.data.data());
      g.inputs.erase(std::find(g.inputs.begin(), g.inputs.end(), name));
      inlined.push_back(name);
      continue;
    }
    if (t.dtype != frugal::DType::Float32)
      return {Outcome::Skipped, std::string("non-float input dtype ") + frugal::dtype_name(t.dtype)};
    HostTensor h;
    h.name = name;
    h.dims = frugal::known_dims(t.shape);
    h.data.resize(t.data.size() / 4);
    if (!t.data.empty()) std::memcpy(h.data.data(), t.data.data(), t.data.size());
    inputs.push_back(h);
  }
  std::vector<HostTensor> expected;
  for (size_t i = 0; i < out_files.size(); ++i) {
    frugal::TensorDesc t = frugal::load_tensor_pb(out_files[i].string());
    const bool is_bool = t.dtype == frugal::DType::Bool;  // the executors return bool outputs as 0 / 1 floats
    if (t.dtype != frugal::DType::Float32 && !is_bool)
      return {Outcome::Skipped, std::string("non-float output dtype ") + frugal::dtype_name(t.dtype)};
    HostTensor h;
    h.name = g.outputs.at(i);
    h.dims = frugal::known_dims(t.shape);
    if (is_bool) {
      for (uint8_t b : t.data) h.data.push_back(b ? 1.0f : 0.0f);
    } else {
      h.data.resize(t.data.size() / 4);
      if (!t.data.empty()) std::memcpy(h.data.data(), t.data.data(), t.data.size());
    }
    expected.push_back(h);
  }

  const std::unique_ptr<PluginExecutor> made = make(frugal::save_onnx_bytes(g));
  PluginExecutor& ex = *made;
  if (!ex.ok()) {
    if (ex.created.code == FRUGAL_ERR_UNSUPPORTED)
      return {Outcome::Skipped, "refused: " + ex.created.message};
    return {Outcome::Failed, "create failed: " + ex.created.message};
  }
  std::vector<HostTensor> outputs;
  for (const HostTensor& e : expected) outputs.push_back(HostTensor{e.name, e.dims, {}});
  const Status st = ex.run(inputs, outputs);
  if (!st.ok()) return {Outcome::Failed, "run failed: " + st.message};
  for (size_t i = 0; i < expected.size(); ++i) {
    const HostTensor &e = expected[i], &o = outputs[i];
    for (size_t k = 0; k < e.data.size(); ++k)
      if (!close(o.data[k], e.data[k]))
        return {Outcome::Failed, "output '" + e.name + "' element " + std::to_string(k) + ": got " +
                                     std::to_string(o.data[k]) + ", want " + std::to_string(e.data[k])};
  }
  if (after_run) {
    const std::string why = after_run(ex);
    if (!why.empty()) return {Outcome::Failed, why};
  }
  std::string note;
  if (!inlined.empty()) {
    note = "inlined as initializers:";
    for (const std::string& s : inlined) note += " " + s;
  }
  return {Outcome::Passed, note};
}

// The node tests that must pass, one name a line ('#' starts a comment): a
// test that used to pass and now skips or fails is a failure, and so is a new
// pass that is not listed (add it, so that it stays passing).
const char* const kPinnedList = FRUGAL_SOURCE_DIR "/tests/support/onnx_node_tests_passing.txt";

std::set<std::string> pinned_passing() {
  std::ifstream f(kPinnedList);
  INFO("the list of node tests that must pass: " << kPinnedList);
  REQUIRE(f.good());
  std::set<std::string> names;
  for (std::string line; std::getline(f, line);) {
    line = line.substr(0, line.find('#'));
    line.erase(line.find_last_not_of(" \t\r") + 1);
    if (!line.empty()) names.insert(line);
  }
  return names;
}

void check_pinned_list(const std::set<std::string>& passed) {
  const std::set<std::string> pinned = pinned_passing();
  CHECK(pinned.size() >= 100);
  for (const std::string& name : pinned) {
    INFO(name << " is listed in " << kPinnedList << " but did not pass (see its line above)");
    CHECK(passed.count(name) == 1);
  }
  for (const std::string& name : passed) {
    INFO(name << " passed but is not listed in " << kPinnedList << ": add it");
    CHECK(pinned.count(name) == 1);
  }
}

}  // namespace

void check_onnx_node_conformance(const std::string& executor, const MakeExecutor& make,
                                 const AfterRun& after_run) {
  const fs::path root = fs::path(FRUGAL_ONNX_TESTDATA) / "node";
  REQUIRE(fs::is_directory(root));
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(root))
    if (e.is_directory() && e.path().filename().string().rfind("test_", 0) == 0) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());

  int passed = 0, skipped_op = 0, skipped_other = 0, failed = 0;
  std::set<std::string> refused_as_expected, passed_names;
  std::cout << "ONNX node tests through the " << executor << " executor:\n";
  for (const fs::path& dir : dirs) {
    const std::string name = dir.filename().string();
    Outcome o{Outcome::Failed, ""};
    try {
      o = run_node_test(dir, make, after_run);
    } catch (const std::exception& e) {
      o = {Outcome::Failed, std::string("exception: ") + e.what()};
    }
    if (o.kind == Outcome::Skipped && o.reason.rfind("unsupported op", 0) == 0) {
      ++skipped_op;  // counted in the summary: most of the 900 tests
      continue;
    }
    if (o.kind == Outcome::Skipped && o.reason.rfind("the importer refuses", 0) == 0) {
      ++skipped_op;
      std::cout << "  skip " << name << ": the importer refuses the model\n";
      continue;
    }
    const bool refused = o.kind == Outcome::Skipped && o.reason.rfind("refused: ", 0) == 0;
    if (refused) {
      INFO(name << ": " << o.reason);
      CHECK(kExpectedSkips.count(name) == 1);
      refused_as_expected.insert(name);
    }
    if (o.kind == Outcome::Failed) {
      ++failed;
      std::cout << "  FAIL " << name << ": " << o.reason << "\n";
      FAIL_CHECK(name << ": " << o.reason);
    } else if (o.kind == Outcome::Skipped) {
      ++skipped_other;
      std::cout << "  skip " << name << ": " << o.reason << "\n";
    } else {
      ++passed;
      passed_names.insert(name);
      std::cout << "  ok   " << name << (o.reason.empty() ? "" : " (" + o.reason + ")") << "\n";
    }
  }
  for (const auto& kv : kExpectedSkips) {
    INFO(kv.first << " is listed as refused (" << kv.second << ") but was not");
    if (fs::exists(root / kv.first)) CHECK(refused_as_expected.count(kv.first) == 1);
  }
  std::cout << "passed " << passed << ", failed " << failed << ", skipped " << skipped_other
            << " (reasons above), skipped " << skipped_op
            << " with ops outside the executors' list or models the importer refuses\n";
  check_pinned_list(passed_names);
}

}  // namespace exec_test
