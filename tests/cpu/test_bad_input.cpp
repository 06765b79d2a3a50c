// (d) Bad input gives a clear error with the right status, never a crash:
// malformed models, unsupported ops (all listed at once), bad options, wrong
// input/output tensors, malformed or impossible plans, budgets too small.
#include <catch2/catch.hpp>
#include <cmath>
#include <thread>

#include "cpu_plugin.h"
#include "graph_helpers.h"
#include "memory_model.h"
#include "zoo/zoo.h"

using Catch::Contains;
using cpu_test::GraphMaker;
using cpu_test::HostTensor;

namespace {

std::vector<HostTensor> tiny_input(int64_t batch) {
  return {HostTensor{"input", {batch, 3, 8, 8}, cpu_test::random_floats(size_t(batch * 3 * 64), 1)}};
}

}  // namespace

TEST_CASE("malformed model bytes are refused naming the model", "[cpu][errors]") {
  cpu_test::Executor ex(std::string("this is not an onnx model"));
  CHECK_FALSE(ex.ok());
  CHECK(ex.created.code == FRUGAL_ERR_INVALID_ARGUMENT);
  CHECK_THAT(ex.created.message, Contains("model"));
}

TEST_CASE("create lists every unsupported node in one error", "[cpu][errors]") {
  GraphMaker m;
  m.input("x", {1, 4});
  m.node("Tanh", {"x"}, "t");
  m.node("Relu", {"t"}, "r");
  m.node("Elu", {"r"}, "l");
  m.node("Erf", {"x"}, "e");
  m.node("Add", {"l", "e"}, "y");
  m.output("y");
  cpu_test::Executor ex(m.graph());
  CHECK(ex.created.code == FRUGAL_ERR_UNSUPPORTED);
  CHECK_THAT(ex.created.message, Contains("3 parts") && Contains("Tanh (node 't')") &&
                                     Contains("Elu (node 'l')") && Contains("Erf (node 'e')"));
}

TEST_CASE("unsupported features are named with their node", "[cpu][errors]") {
  GraphMaker m;
  m.input("x", {1, 2, 4, 4, 4});
  frugal::Node& n = m.node("MaxPool", {"x"}, "p");
  n.set_attr_ints("kernel_shape", {2, 2, 2});
  m.output("p");
  cpu_test::Executor ex(m.graph());
  CHECK(ex.created.code == FRUGAL_ERR_UNSUPPORTED);
  CHECK_THAT(ex.created.message, Contains("MaxPool node 'p'") && Contains("3-D"));

  GraphMaker w;  // conv weights computed at run time
  w.input("x", {1, 2, 4, 4});
  w.input("W", {3, 2, 1, 1});
  w.node("Conv", {"x", "W"}, "y");
  w.output("y");
  cpu_test::Executor ex2(w.graph());
  CHECK(ex2.created.code == FRUGAL_ERR_UNSUPPORTED);
  CHECK_THAT(ex2.created.message, Contains("Conv node 'y'") && Contains("weights W 'W'"));
}

TEST_CASE("the threads option is checked", "[cpu][errors]") {
  const frugal::Graph g = frugal::build_zoo_model("toy_tiny", 1);
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  cpu_test::Executor too_many(g, "{\"threads\": " + std::to_string(4 * cores + 1) + "}");
  CHECK(too_many.created.code == FRUGAL_ERR_INVALID_ARGUMENT);
  CHECK_THAT(too_many.created.message, Contains("'threads'") && Contains(std::to_string(4 * cores + 1)) &&
                                           Contains(std::to_string(cores) + " core"));
  cpu_test::Executor zero(g, "{\"threads\": 0}");
  CHECK(zero.created.code == FRUGAL_ERR_INVALID_ARGUMENT);
  cpu_test::Executor text(g, "{\"threads\": \"two\"}");
  CHECK(text.created.code == FRUGAL_ERR_INVALID_ARGUMENT);
  CHECK_THAT(text.created.message, Contains("integer"));
  cpu_test::Executor bad_json(g, "{threads: 2");
  CHECK(bad_json.created.code == FRUGAL_ERR_INVALID_ARGUMENT);
  cpu_test::Executor max_ok(g, "{\"threads\": " + std::to_string(4 * cores) + "}");
  CHECK(max_ok.ok());
  cpu_test::Executor dflt(g);
  REQUIRE(dflt.ok());
  CHECK(dflt.describe()["threads"] == cores);
}

TEST_CASE("the time_layer option is checked, cold by default, and every mode times", "[cpu][errors]") {
  const frugal::Graph g = frugal::build_zoo_model("toy_tiny", 1);
  cpu_test::Executor bad(g, "{\"time_layer\": \"hot\"}");
  CHECK(bad.created.code == FRUGAL_ERR_INVALID_ARGUMENT);
  CHECK_THAT(bad.created.message, Contains("'time_layer'") && Contains("hot"));
  cpu_test::Executor dflt(g, "{\"threads\": 1}");
  REQUIRE(dflt.ok());
  CHECK(dflt.describe()["time_layer"] == "cold");
  cpu_test::Executor warm(g, "{\"threads\": 1, \"time_layer\": \"warm\"}");
  REQUIRE(warm.ok());
  CHECK(warm.describe()["time_layer"] == "warm");
  cpu_test::Executor inputs(g, "{\"threads\": 1, \"time_layer\": \"cold_inputs\"}");
  REQUIRE(inputs.ok());
  CHECK(inputs.describe()["time_layer"] == "cold_inputs");
  double median = 0, spread = 0;
  for (cpu_test::Executor* ex : {&dflt, &warm, &inputs}) {
    REQUIRE(ex->time_layer(0, 2, 3, median, spread).ok());
    CHECK(median > 0);
  }
}

TEST_CASE("wrong inputs and outputs are refused naming the tensor", "[cpu][errors]") {
  cpu_test::Executor ex(frugal::build_zoo_model("toy_tiny", 1));
  REQUIRE(ex.ok());
  std::vector<HostTensor> out;

  std::vector<HostTensor> wrong_shape = {
      HostTensor{"input", {2, 4, 8, 8}, std::vector<float>(2 * 4 * 64, 0.f)}};
  cpu_test::Status st = ex.run(wrong_shape, out);
  CHECK(st.code == FRUGAL_ERR_INVALID_ARGUMENT);
  CHECK_THAT(st.message, Contains("input 'input'") && Contains("[2, 4, 8, 8]") && Contains("[B, 3, 8, 8]"));

  std::vector<HostTensor> wrong_name = tiny_input(1);
  wrong_name[0].name = "image";
  out.clear();
  st = ex.run(wrong_name, out);
  CHECK_THAT(st.message, Contains("no input named 'image'") && Contains("input"));

  // A float64 buffer presented as such: refused by dtype, through the raw table.
  std::vector<double> doubles(3 * 64, 0.0);
  const int64_t dims[] = {1, 3, 8, 8};
  frugal_tensor in{"input", 11 /* FLOAT64 */, 4, dims, doubles.data(), doubles.size() * sizeof(double)};
  std::vector<float> y(5);
  const int64_t ydims[] = {1, 5};
  frugal_tensor o{"output", FRUGAL_DTYPE_FLOAT32, 2, ydims, y.data(), y.size() * sizeof(float)};
  frugal_error err{};
  CHECK(cpu_test::api().run(ex.handle(), nullptr, &in, 1, &o, 1, nullptr, &err) ==
        FRUGAL_ERR_INVALID_ARGUMENT);
  CHECK_THAT(std::string(err.message),
             Contains("input 'input'") && Contains("float64") && Contains("float32"));
  // A byte count that disagrees with the dims.
  std::vector<float> x(3 * 64, 0.f);
  frugal_tensor short_in{"input", FRUGAL_DTYPE_FLOAT32, 4, dims, x.data(), 100};
  CHECK(cpu_test::api().run(ex.handle(), nullptr, &short_in, 1, &o, 1, nullptr, &err) ==
        FRUGAL_ERR_INVALID_ARGUMENT);
  CHECK_THAT(std::string(err.message), Contains("100 bytes") && Contains("768"));

  // Output of the wrong shape.
  std::vector<HostTensor> bad_out = {HostTensor{"output", {1, 6}, {}}};
  st = ex.run(tiny_input(1), bad_out);
  CHECK(st.code == FRUGAL_ERR_INVALID_ARGUMENT);
  CHECK_THAT(st.message, Contains("output 'output'") && Contains("[1, 6]") && Contains("[1, 5]"));

  // Two inputs for a one-input model.
  std::vector<HostTensor> two = tiny_input(1);
  two.push_back(two[0]);
  out.clear();
  st = ex.run(two, out);
  CHECK_THAT(st.message, Contains("1 input(s)") && Contains("got 2"));
}

TEST_CASE("malformed and impossible plans are refused naming the step", "[cpu][errors]") {
  cpu_test::Executor ex(frugal::build_zoo_model("toy_tiny", 1));
  REQUIRE(ex.ok());
  const nlohmann::json d = ex.describe();
  const std::string first = d["layers"][0]["name"], second = d["layers"][1]["name"];
  auto step = [](const nlohmann::json& layer, int64_t f, int64_t c) {
    return nlohmann::json{{"layer", layer}, {"first", f}, {"count", c}};
  };
  auto plan_of = [](const std::vector<nlohmann::json>& steps) { return nlohmann::json{{"steps", steps}}; };
  auto try_plan = [&](const nlohmann::json& plan) {
    std::vector<HostTensor> out;
    return ex.run(tiny_input(2), out, plan);
  };
  std::vector<nlohmann::json> all;
  for (const auto& L : d["layers"]) all.push_back(step(L["name"], 0, 2));

  cpu_test::Status st = try_plan({{"steps", "none"}});
  CHECK(st.code == FRUGAL_ERR_INVALID_ARGUMENT);
  CHECK_THAT(st.message, Contains("\"steps\" must be an array"));

  std::vector<nlohmann::json> unknown = all;
  unknown[1] = step("no_such_layer", 0, 2);
  st = try_plan(plan_of(unknown));
  CHECK_THAT(st.message, Contains("step 1") && Contains("no layer named 'no_such_layer'"));

  std::vector<nlohmann::json> twice = all;
  twice.insert(twice.begin() + 1, step(first, 1, 1));
  st = try_plan(plan_of(twice));
  CHECK(st.code == FRUGAL_ERR_INVALID_ARGUMENT);
  CHECK_THAT(st.message, Contains("step 1") && Contains("sample 1 already ran through this layer at step 0"));

  std::vector<nlohmann::json> unordered = all;  // sample 1 before sample 0
  unordered[0] = step(first, 1, 1);
  unordered.insert(unordered.begin() + 1, step(first, 0, 1));
  st = try_plan(plan_of(unordered));
  CHECK(st.code == FRUGAL_ERR_INVALID_ARGUMENT);
  CHECK_THAT(st.message, Contains("step 0") && Contains("takes its samples in order") &&
                             Contains("the next sample of '" + first + "' is 0"));

  std::vector<nlohmann::json> early = all;
  std::swap(early[0], early[1]);
  st = try_plan(plan_of(early));
  CHECK_THAT(st.message,
             Contains("step 0") && Contains("layer '" + second + "'") && Contains("does not hold sample 0"));

  std::vector<nlohmann::json> partial = all;
  partial.back() = step(d["layers"].back()["name"], 0, 1);
  st = try_plan(plan_of(partial));
  CHECK_THAT(st.message, Contains("never runs on sample 1"));

  std::vector<nlohmann::json> range = all;
  range[0] = step(first, 1, 2);
  st = try_plan(plan_of(range));
  CHECK_THAT(st.message, Contains("samples must lie in 0..1"));

  std::vector<nlohmann::json> index = all;
  index[0] = step(0, 0, 2);  // layers may be given by index too
  std::vector<HostTensor> out;
  CHECK(ex.run(tiny_input(2), out, plan_of(index)).ok());

  st = try_plan(nlohmann::json{{"steps", {{{"layer", first}, {"first", 0}}}}});
  CHECK_THAT(st.message, Contains("\"count\" must be an integer"));
}

TEST_CASE("a budget below what one sample needs names the smallest budget that works", "[cpu][errors]") {
  cpu_test::Executor ex(frugal::build_zoo_model("toy_branched", 2));
  REQUIRE(ex.ok());
  cpu_test::MemoryModel mm(ex);
  for (int64_t batch : {1, 3}) {
    std::vector<cpu_test::Step> one_at_a_time;
    for (int64_t s = 0; s < batch; ++s)
      for (size_t l = 0; l < mm.description()["layers"].size(); ++l) one_at_a_time.push_back({int(l), s, 1});
    const uint64_t smallest = mm.peak(one_at_a_time, batch);
    std::vector<HostTensor> in = {
        HostTensor{"input", {batch, 3, 16, 16}, cpu_test::random_floats(size_t(batch * 3 * 256), 7)}};
    REQUIRE(ex.set_budget(smallest - 1).ok());
    std::vector<HostTensor> out;
    const cpu_test::Status st = ex.run(in, out);
    CHECK(st.code == FRUGAL_ERR_BUDGET);
    CHECK_THAT(st.message, Contains("even batch 1 does not fit") &&
                               Contains("the smallest budget that works") &&
                               Contains("(" + std::to_string(smallest) + " bytes)"));
    // That budget does run the one-sample-at-a-time plan.
    REQUIRE(ex.set_budget(smallest).ok());
    out.clear();
    nlohmann::json report;
    const cpu_test::Status ok =
        ex.run(in, out, cpu_test::MemoryModel::to_json(one_at_a_time, mm.description()), &report);
    INFO(ok.message);
    CHECK(ok.ok());
    CHECK(report["peak_bytes"].get<uint64_t>() == smallest);
  }
}

TEST_CASE("layer_bytes and time_layer check their arguments and the budget", "[cpu][errors]") {
  cpu_test::Executor ex(frugal::build_zoo_model("toy_tiny", 1), "{\"threads\": 1}");
  REQUIRE(ex.ok());
  frugal_layer_bytes b{};
  frugal_error err{};
  CHECK(cpu_test::api().layer_bytes(ex.handle(), 99, 1, &b, &err) == FRUGAL_ERR_INVALID_ARGUMENT);
  CHECK_THAT(std::string(err.message), Contains("layer index 99"));
  CHECK(cpu_test::api().layer_bytes(ex.handle(), 0, 0, &b, &err) == FRUGAL_ERR_INVALID_ARGUMENT);
  double median = 0, spread = 0;
  CHECK(ex.time_layer(0, 2, 0, median, spread).code == FRUGAL_ERR_INVALID_ARGUMENT);
  // Without a budget: a temporary arena of exactly in + out + ws.
  REQUIRE(ex.time_layer(0, 2, 3, median, spread).ok());
  CHECK(median > 0);
  CHECK(spread >= 0);
  const frugal_layer_bytes need = ex.layer_bytes(0, 2);
  REQUIRE(ex.set_budget(need.in_bytes + need.out_bytes + need.ws_bytes - 1).ok());
  const cpu_test::Status st = ex.time_layer(0, 2, 3, median, spread);
  CHECK(st.code == FRUGAL_ERR_BUDGET);
  CHECK_THAT(st.message, Contains("time_layer") &&
                             Contains(std::to_string(need.in_bytes + need.out_bytes + need.ws_bytes)));
  REQUIRE(ex.set_budget(need.in_bytes + need.out_bytes + need.ws_bytes).ok());
  CHECK(ex.time_layer(0, 2, 3, median, spread).ok());
}

TEST_CASE("a model that is not batch-separable runs whole, and says why", "[cpu][errors]") {
  GraphMaker m;
  m.input("x", {2, 3});
  frugal::Node& n = m.node("Softmax", {"x"}, "y");
  n.set_attr_int("axis", 0);
  m.output("y");
  cpu_test::Executor ex(m.graph());
  REQUIRE(ex.ok());
  const nlohmann::json d = ex.describe();
  CHECK(d["batched"] == false);
  CHECK_THAT(d["not_batched_reason"].get<std::string>(),
             Contains("Softmax node 'y'") && Contains("different samples"));
  frugal_layer_bytes b{};
  frugal_error err{};
  CHECK(cpu_test::api().layer_bytes(ex.handle(), 0, 2, &b, &err) == FRUGAL_ERR_INVALID_ARGUMENT);
  CHECK_THAT(std::string(err.message), Contains("not batched"));
  std::vector<HostTensor> in = {HostTensor{"x", {2, 3}, {1, 2, 3, 4, 5, 6}}}, out;
  REQUIRE(ex.run(in, out).ok());
  CHECK(out[0].data[0] == Approx(1.0 / (1.0 + std::exp(3.0))));
  std::vector<HostTensor> in3 = {HostTensor{"x", {3, 3}, std::vector<float>(9, 0.f)}},
                          out3 = {HostTensor{"y", {3, 3}, {}}};
  const cpu_test::Status st = ex.run(in3, out3);
  CHECK_THAT(st.message, Contains("[3, 3]") && Contains("expected [2, 3]"));
}

TEST_CASE("a budget larger than the machine's memory is refused", "[cpu][errors]") {
  cpu_test::Executor ex(frugal::build_zoo_model("toy_tiny", 1));
  REQUIRE(ex.ok());
  const cpu_test::Status st = ex.set_budget(uint64_t(1) << 60);
  CHECK(st.code == FRUGAL_ERR_OUT_OF_MEMORY);
  CHECK_THAT(st.message, Contains("set_budget") && Contains("more than this machine's memory"));
  CHECK(ex.set_budget(1 << 20).ok());
}

TEST_CASE("a run that would need more than the machine's memory is refused before allocating",
          "[cpu][errors]") {
  // Found by the fuzzer: a huge intermediate (a 1x1 conv with pads of 2^20, 16 TB)
  // between a small input and a small output. Without a budget the run sizes
  // its arena to the plan's need; it must say so instead of trying to allocate.
  cpu_test::GraphMaker m;
  m.input("x", {1, 1, 2, 2});
  m.constant("w", {1, 1, 1, 1}, {1.f});
  m.node("Conv", {"x", "w"}, "big").set_attr_ints("pads", {1 << 20, 1 << 20, 1 << 20, 1 << 20});
  m.node("GlobalAveragePool", {"big"}, "y");
  m.output("y");
  cpu_test::Executor ex(m.graph());
  INFO(ex.created.message);
  REQUIRE(ex.ok());
  std::vector<HostTensor> in = {HostTensor{"x", {1, 1, 2, 2}, {1, 2, 3, 4}}}, out;
  const cpu_test::Status st = ex.run(in, out);
  CHECK(st.code == FRUGAL_ERR_OUT_OF_MEMORY);
  CHECK_THAT(st.message, Contains("run: this run needs") && Contains("more than this machine's memory"));
}
