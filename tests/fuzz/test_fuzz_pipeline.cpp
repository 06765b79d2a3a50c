// Fuzzing past the importer: mutants of the zoo toys, changed where a model
// can be wrong yet still well-formed ONNX (attributes, declared shapes,
// initializer shapes, graph wiring, op types), are saved and imported; each one
// that imports goes through what a user would do with it: `frugal info` (the
// script, in-process), both folders, and a run on the cpu executor. Each step
// may refuse the model with an error; none may crash (CI runs this under
// ASan + UBSan, where a memory error or undefined behaviour aborts the test).
//
//   FRUGAL_FUZZ_MUTANTS=N   mutants that import, at least (default 300)
//   FRUGAL_FUZZ_SECONDS=S   or go on until S seconds have passed
//   FRUGAL_FUZZ_SEED=K      first seed (default 1); mutant i uses seed K + i
// A crash names the seed of the mutant on its last "mutant" line (FRUGAL_FUZZ_VERBOSE=1).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <random>
#include <sstream>

#include "executor_plugin.h"
#include "folder/fold.h"
#include "frugal/error.h"
#include "frugal/model/macs.h"
#include "frugal/model/onnx_export.h"
#include "frugal/model/onnx_import.h"
#include "frugal/model/shape_inference.h"
#include "lua/lua_runner.h"
#include "zoo/zoo.h"

using namespace frugal;

namespace {

int64_t env_int(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoll(v, nullptr, 10) : fallback;
}

template <class T>
const T& pick(std::mt19937_64& rng, const std::vector<T>& v) {
  return v[rng() % v.size()];
}

const std::vector<int64_t> kInts = {
    0, 1, 2, 3, 5, -1, -2, 7, 64, 1 << 20, int64_t(1) << 40, -(int64_t(1) << 40)};
const std::vector<float> kFloats = {0.0f,
                                    1.0f,
                                    -1.0f,
                                    0.5f,
                                    1e30f,
                                    -1e-30f,
                                    std::numeric_limits<float>::infinity(),
                                    std::numeric_limits<float>::quiet_NaN()};
const std::vector<std::string> kOps = {"Conv",
                                       "Relu",
                                       "MaxPool",
                                       "AveragePool",
                                       "GlobalAveragePool",
                                       "Add",
                                       "Concat",
                                       "Flatten",
                                       "Gemm",
                                       "MatMul",
                                       "BatchNormalization",
                                       "Reshape",
                                       "Softmax",
                                       "Identity",
                                       "Dropout",
                                       "Clip",
                                       "Sigmoid",
                                       "Mul",
                                       "LRN",
                                       "GlobalMaxPool",
                                       "Pad",
                                       "Resize"};
const std::vector<std::string> kAttrNames = {"kernel_shape",
                                             "strides",
                                             "pads",
                                             "dilations",
                                             "group",
                                             "axis",
                                             "transA",
                                             "transB",
                                             "alpha",
                                             "beta",
                                             "epsilon",
                                             "ceil_mode",
                                             "count_include_pad",
                                             "size",
                                             "auto_pad",
                                             "mode"};

std::vector<int64_t> random_ints(std::mt19937_64& rng) {
  std::vector<int64_t> v(rng() % 6);
  for (int64_t& x : v) x = pick(rng, kInts);
  return v;
}

void mutate_attribute(Graph& g, std::mt19937_64& rng) {
  Node& n = g.nodes[rng() % g.nodes.size()];
  if (n.attributes.empty() || rng() % 3 == 0) {
    Attribute a;
    a.name = pick(rng, kAttrNames);
    a.kind = Attribute::Kind::Ints;
    n.attributes.push_back(a);
  }
  Attribute& a = n.attributes[rng() % n.attributes.size()];
  switch (rng() % 5) {
    case 0:
      a.kind = Attribute::Kind::Int;
      a.i = pick(rng, kInts);
      break;
    case 1:
      a.kind = Attribute::Kind::Ints;
      a.ints = random_ints(rng);
      break;
    case 2:
      a.kind = Attribute::Kind::Float;
      a.f = pick(rng, kFloats);
      break;
    case 3:
      a.kind = Attribute::Kind::String;
      a.s =
          pick(rng, std::vector<std::string>{"SAME_UPPER", "VALID", "NOTSET", "", "reflect", "nearest", "x"});
      break;
    default:
      if (a.kind == Attribute::Kind::Ints && !a.ints.empty())
        a.ints[rng() % a.ints.size()] = pick(rng, kInts);
      break;
  }
}

// A declared shape (graph input or output) changes.
void mutate_declared_shape(Graph& g, std::mt19937_64& rng) {
  std::vector<std::string> names = g.inputs;
  names.insert(names.end(), g.outputs.begin(), g.outputs.end());
  TensorDesc& t = g.tensor(pick(rng, names));
  t.has_shape = true;
  if (t.shape.empty() || rng() % 4 == 0) {
    t.shape.resize(1 + rng() % 5);
    for (Dim& d : t.shape) d = Dim{2, ""};
  }
  Dim& d = t.shape[rng() % t.shape.size()];
  d = rng() % 3 == 0 ? Dim{-1, "N"} : Dim{std::max<int64_t>(0, pick(rng, kInts) % 4096), ""};
}

// An initializer keeps its bytes under another shape (same element count, or
// a different one the importer must catch), or loses or gains elements.
void mutate_initializer(Graph& g, std::mt19937_64& rng) {
  std::vector<std::string> names;
  for (const auto& kv : g.tensors)
    if (kv.second.is_initializer) names.push_back(kv.first);
  if (names.empty()) return;
  TensorDesc& t = g.tensor(pick(rng, names));
  const int64_t count = int64_t(t.data.size() / std::max<size_t>(1, dtype_size(t.dtype)));
  switch (rng() % 4) {
    case 0:  // flat
      t.shape = make_shape({count});
      break;
    case 1:  // split the first dim
      if (!t.shape.empty() && t.shape[0].value % 2 == 0) {
        t.shape[0].value /= 2;
        t.shape.push_back(Dim{2, ""});
      }
      break;
    case 2:  // a whole element more or fewer: the importer's size check
      t.data.resize(rng() % 2 ? t.data.size() + dtype_size(t.dtype) : t.data.size() / 2);
      break;
    default:  // a dim of 0 with no data
      t.shape = make_shape({0});
      t.data.clear();
      break;
  }
}

// A node reads another value (earlier, later: a cycle, a graph input, a weight).
void mutate_wiring(Graph& g, std::mt19937_64& rng) {
  Node& n = g.nodes[rng() % g.nodes.size()];
  if (n.inputs.empty()) return;
  std::vector<std::string> values = g.inputs;
  for (const Node& m : g.nodes)
    for (const std::string& o : m.outputs) values.push_back(o);
  for (const auto& kv : g.tensors)
    if (kv.second.is_initializer) values.push_back(kv.first);
  const size_t slot = rng() % n.inputs.size();
  switch (rng() % 4) {
    case 0:
      n.inputs[slot] = "";
      break;
    case 1:
      n.inputs.push_back(pick(rng, values));
      break;
    case 2:
      if (n.inputs.size() > 1) n.inputs.pop_back();
      break;
    default:
      n.inputs[slot] = pick(rng, values);
      break;
  }
}

void mutate_op(Graph& g, std::mt19937_64& rng) { g.nodes[rng() % g.nodes.size()].op_type = pick(rng, kOps); }

Graph mutant(const std::vector<Graph>& bases, uint64_t seed) {
  std::mt19937_64 rng(seed);
  Graph g = bases[rng() % bases.size()];
  const int edits = 1 + int(rng() % 3);
  for (int e = 0; e < edits; ++e) {
    switch (rng() % 5) {
      case 0:
        mutate_attribute(g, rng);
        break;
      case 1:
        mutate_declared_shape(g, rng);
        break;
      case 2:
        mutate_initializer(g, rng);
        break;
      case 3:
        mutate_wiring(g, rng);
        break;
      default:
        mutate_op(g, rng);
        break;
    }
  }
  return g;
}

// How far the mutants got: each step's successes.
struct Reached {
  int64_t info = 0, banoff = 0, naive = 0, created = 0, ran = 0;
};

// `frugal info FILE --batch 2`, the script itself, its printing silenced.
bool run_info_script(const std::string& file) {
  LuaRunner lua;
  std::ostringstream err;
  lua.set_error_stream(&err);
  const std::string lib = FRUGAL_SOURCE_DIR "/scripts/lib/?.lua";
  REQUIRE(lua.run_string("package.path = '" + lib + ";' .. package.path; print = function() end; " +
                             "io.write = function() end",
                         "fuzz setup", {}) == 0);
  return lua.run_file(FRUGAL_SOURCE_DIR "/scripts/info.lua", {file, "--batch", "2"}) ==
         0;  // or a clean error
}

// Folds with both methods: a result or a frugal::Error.
void fold_both(const Graph& g, Reached& r) {
  try {
    fold_banoff(g);
    ++r.banoff;
  } catch (const Error&) {
  }
  try {
    fold_naive(g);
    ++r.naive;
  } catch (const Error&) {
  }
}

// The cpu executor: create (or refuse), then a run at batch 2 on random inputs
// shaped as describe() says (or a refusal).
void run_on_cpu(const Graph& g, Reached& r) {
  exec_test::PluginExecutor ex(exec_test::executor_api("cpu"), g, "{\"threads\": 1}");
  if (!ex.ok()) return;
  ++r.created;
  const nlohmann::json d = ex.describe();
  std::vector<exec_test::HostTensor> in, out;
  for (const auto& i : d["inputs"]) {
    std::vector<int64_t> dims = i["shape"].get<std::vector<int64_t>>();
    if (!dims.empty()) dims[0] = 2;
    int64_t n = 1;
    for (int64_t x : dims) n *= std::max<int64_t>(x, 0);
    if (n > (int64_t(1) << 24)) return;  // too large to be worth running
    in.push_back({i["name"], dims, exec_test::random_floats(size_t(n), 5)});
  }
  if (ex.run(in, out).ok()) ++r.ran;  // or a status with a message
}

}  // namespace

TEST_CASE("mutants that import survive info, fold and a cpu run", "[fuzz]") {
  const int64_t want = env_int("FRUGAL_FUZZ_MUTANTS", 300);
  const int64_t seconds = env_int("FRUGAL_FUZZ_SECONDS", 0);
  const uint64_t first = uint64_t(env_int("FRUGAL_FUZZ_SEED", 1));
  const bool verbose = env_int("FRUGAL_FUZZ_VERBOSE", 0) != 0;
  std::vector<Graph> bases;
  for (const std::string& name : zoo_names())
    if (name.rfind("toy_", 0) == 0) bases.push_back(build_zoo_model(name, 3));
  REQUIRE(bases.size() >= 3);
  const std::string file =
      std::string(FRUGAL_TEST_BINARY_DIR) + "/fuzz_mutant_" + std::to_string(getpid()) + ".onnx";
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  int64_t imported = 0, refused = 0;
  Reached reached;
  uint64_t seed = first;
  for (; seconds > 0 ? elapsed() < double(seconds) : imported < want; ++seed) {
    if (verbose) std::cout << "mutant " << seed << std::endl;
    const std::string bytes = save_onnx_bytes(mutant(bases, seed));
    Graph g;
    try {
      g = load_onnx_bytes(bytes.data(), bytes.size(), "mutant " + std::to_string(seed));
    } catch (const Error&) {
      ++refused;  // the importer's own fuzzing is tests/onnx/mutation_fuzz_test.cpp
      continue;
    }
    ++imported;
    std::ofstream(file, std::ios::binary) << bytes;
    if (run_info_script(file)) ++reached.info;
    fold_both(g, reached);
    run_on_cpu(g, reached);
  }
  std::filesystem::remove(file);
  std::cout << "fuzz: seeds " << first << "-" << seed - 1 << ": " << imported
            << " mutants imported and went through "
            << "info, fold and a cpu run; " << refused << " refused by the importer; " << elapsed() << " s\n"
            << "  succeeded: info " << reached.info << ", banoff fold " << reached.banoff << ", naive fold "
            << reached.naive << ", cpu create " << reached.created << ", cpu run " << reached.ran
            << " (the others were refused with an error)\n";
  CHECK(imported >= (seconds > 0 ? 1 : want));
  CHECK(imported * 4 >= refused);  // mostly past the importer, or the mutations are too crude
  // The later steps must see both kinds, models they accept and models they
  // refuse (info reports what it cannot infer instead of failing).
  CHECK(reached.info > 0);
  for (int64_t n : {reached.banoff, reached.created, reached.ran}) {
    CHECK(n > 0);
    CHECK(n < imported);
  }
}
