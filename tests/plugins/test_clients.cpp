// The host-side clients against fixture plugins: values cross correctly, failures
// become Errors naming the plugin, unusable answers are refused, and every blob and
// executor handle is released.
#include <catch2/catch.hpp>
#include <random>

#include "fixture_paths.h"
#include "frugal/error.h"
#include "frugal/model/onnx_export.h"
#include "frugal/model/onnx_import.h"
#include "frugal/plugin.h"
#include "loader/executor_client.h"
#include "loader/folder_client.h"
#include "loader/planner_client.h"
#include "loader/plugin_call.h"
#include "loader/predictor_client.h"

using namespace frugal;
using fixture_paths::call_counter;
using fixture_paths::in_scan;

namespace {

const LoadedPlugin& plugin(int kind, const std::string& name) {
  return fixture_paths::scanned_registry().require(kind, name);
}

// A small real model from the ONNX backend test data.
Graph relu_model() {
  return load_onnx_file(std::string(FRUGAL_ONNX_TESTDATA) + "/node/test_relu/model.onnx");
}

const nlohmann::json kCosts = {{"layers", {{{"name", "a"}, {"time_s", {1.0}}}}}};

int live_blobs(const LoadedPlugin& p) { return call_counter(p, "fixture_live_blobs"); }

}  // namespace

TEST_CASE("a failing plugin call becomes an Error naming the plugin, with its status", "[plugins][unit]") {
  const LoadedPlugin& failing = plugin(FRUGAL_KIND_PLANNER, "failing");
  try {
    make_plan(failing, kCosts, {{"batch", 1}});
    FAIL("make_plan did not throw");
  } catch (const PluginCallError& e) {
    CHECK(e.status == FRUGAL_ERR_BUDGET);
    CHECK(std::string(e.what()) ==
          "failing (" + in_scan("failing_planner.so") + "): plan: needs 4096 bytes, budget is 1024");
  }
  CHECK(live_blobs(failing) == 0);  // the blob it filled before failing was released
}

TEST_CASE("OK with an unusable answer is refused with a clear error", "[plugins][unit]") {
  const nlohmann::json options = {{"batch", 1}};
  CHECK_THROWS_WITH(make_plan(plugin(FRUGAL_KIND_PLANNER, "empty"), kCosts, options),
                    "empty (" + in_scan("empty_planner.so") + "): returned OK but an empty plan");
  const LoadedPlugin& garbage = plugin(FRUGAL_KIND_PLANNER, "garbage");
  CHECK_THROWS_WITH(make_plan(garbage, kCosts, options),
                    Catch::StartsWith("garbage (" + in_scan("garbage_planner.so") +
                                      "): the plan it returned is not valid JSON: "));
  CHECK(live_blobs(garbage) == 0);
  CHECK_THROWS_WITH(make_plan(plugin(FRUGAL_KIND_PLANNER, "no_data"), kCosts, options),
                    Catch::Contains("returned OK but the plan has size 100 and no data"));
}

TEST_CASE("bad input to a plugin comes back as invalid argument", "[plugins][unit]") {
  const LoadedPlugin& fixed = plugin(FRUGAL_KIND_PLANNER, "fixed");
  try {
    make_plan(fixed, kCosts, {{"chunk", 2}});  // no "batch"
    FAIL("make_plan did not throw");
  } catch (const PluginCallError& e) {
    CHECK(e.status == FRUGAL_ERR_INVALID_ARGUMENT);
    CHECK_THAT(e.what(), Catch::Contains("fixed (") && Catch::Contains("batch"));
  }
}

TEST_CASE("a client refuses a plugin of the wrong kind", "[plugins][unit]") {
  const LoadedPlugin& fixed = plugin(FRUGAL_KIND_PLANNER, "fixed");
  CHECK_THROWS_WITH(fold_model(fixed, relu_model()),
                    "fixed (" + in_scan("fixed_planner.so") + "): is a planner plugin, not a folder");
  CHECK_THROWS_WITH(ExecutorClient(fixed, relu_model()),
                    Catch::Contains("is a planner plugin, not a executor"));
}

TEST_CASE("fold_model sends the model as ONNX and reads the folded one back", "[plugins][unit]") {
  const LoadedPlugin& identity = plugin(FRUGAL_KIND_FOLDER, "identity");
  const Graph g = relu_model();
  const std::string bytes = save_onnx_bytes(g);
  const FoldedModel f = fold_model(identity, g, {{"mode", "banoff"}});
  CHECK(f.report["bytes_in"] == bytes.size());
  CHECK(f.report["options"] == nlohmann::json{{"mode", "banoff"}});
  CHECK(save_onnx_bytes(f.graph) == bytes);  // identity folder: the same model back
  CHECK(f.graph.nodes.size() == g.nodes.size());
  CHECK(live_blobs(identity) == 0);
}

TEST_CASE("predict_costs passes model, table and options and returns the filled table", "[plugins][unit]") {
  const LoadedPlugin& constant = plugin(FRUGAL_KIND_PREDICTOR, "constant");
  const Graph g = relu_model();
  const nlohmann::json measured = {
      {"layers", {{{"name", "a"}, {"time_s", {0.5}}}, {{"name", "b"}, {"time_s", {0.25, 0.2}}}}}};
  const nlohmann::json t = predict_costs(constant, g, measured, {{"upto", 3}});
  CHECK(t["model_bytes"] == save_onnx_bytes(g).size());
  CHECK(t["batch_max"] == 3);
  CHECK(t["layers"][0]["time_s"] == nlohmann::json({0.5, 0.5, 0.5}));
  CHECK(t["layers"][1]["time_s"] == nlohmann::json({0.25, 0.2, 0.25}));
  CHECK(t["layers"][1]["source"] == nlohmann::json({"measured", "measured", "predicted"}));
  CHECK_THROWS_WITH(predict_costs(constant, g, measured, {{"up_to", 3}}),
                    Catch::StartsWith("constant (" + in_scan("constant_predictor.so") + "): predict: "));
  CHECK(live_blobs(constant) == 0);
}

TEST_CASE("train_predictor refuses a predictor whose table stops before train", "[plugins][unit]") {
  // The constant fixture's table is FRUGAL_PREDICTOR_API_BASE_SIZE bytes: loaded, but not trainable.
  const LoadedPlugin& constant = plugin(FRUGAL_KIND_PREDICTOR, "constant");
  const Graph g = relu_model();
  CHECK(*static_cast<const size_t*>(constant.api) == FRUGAL_PREDICTOR_API_BASE_SIZE);
  CHECK_THROWS_WITH(train_predictor(constant, {{&g, nlohmann::json::object()}}, nullptr),
                    Catch::Contains("this predictor cannot be trained (its table has no train function)"));
}

TEST_CASE("ExecutorClient drives an executor through every call", "[plugins][unit]") {
  const LoadedPlugin& doubler = plugin(FRUGAL_KIND_EXECUTOR, "doubler");
  const int live_before = call_counter(doubler, "fixture_live_executors");
  const Graph g = relu_model();
  {
    ExecutorClient ex(doubler, g, {{"threads", 1}});
    CHECK(call_counter(doubler, "fixture_live_executors") == live_before + 1);

    const auto d = ex.describe();
    CHECK(d["model_bytes"] == save_onnx_bytes(g).size());
    CHECK(ex.input_names() == std::vector<std::string>{"x"});
    CHECK(ex.output_names() == std::vector<std::string>{"y"});
    CHECK(ex.output_shapes(3) == std::vector<std::vector<int64_t>>{{3, 4}});

    const LayerBytes lb = ex.layer_bytes(0, 3);
    CHECK(lb.in_bytes == 48);
    CHECK(lb.out_bytes == 48);
    CHECK(lb.ws_bytes == 12);
    CHECK_THROWS_WITH(ex.layer_bytes(1, 1),
                      "doubler (" + in_scan("doubler_executor.so") +
                          "): layer_bytes(layer 1, batch 1): layer 1 does not exist (1 layer)");
    CHECK(ex.time_layer(0, 8, 3).median_seconds == Approx(8e-3));

    // Whole-batch run; outputs allocated from describe()'s shapes.
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> u(-1, 1);
    Tensor x({3, 4});
    for (auto& v : x.data) v = u(rng);
    std::vector<Tensor> out;
    const auto report = ex.run(nullptr, {x}, out);
    REQUIRE(out.size() == 1);
    CHECK(out[0].dims == std::vector<int64_t>{3, 4});
    for (size_t i = 0; i < x.data.size(); ++i) CHECK(out[0].data[i] == 2.0f * x.data[i]);
    CHECK(report["peak_bytes"] == 3 * (16 + 16 + 4));
    CHECK(report["steps"] == 1);

    // A plan goes across as JSON.
    const nlohmann::json plan = {{"steps",
                                  {{{"layer", "double"}, {"first", 0}, {"count", 2}},
                                   {{"layer", "double"}, {"first", 2}, {"count", 1}}}}};
    CHECK(ex.run(plan, {"x"}, {x}, {"y"}, out)["steps"] == 2);

    // One byte short of the need: the plugin's budget refusal, with its status.
    ex.set_budget(3 * 36 - 1);
    try {
      ex.run(nullptr, {x}, out);
      FAIL("run did not throw");
    } catch (const PluginCallError& e) {
      CHECK(e.status == FRUGAL_ERR_BUDGET);
      CHECK_THAT(e.what(), Catch::EndsWith("run: needs 108 bytes, budget is 107"));
    }
    ex.set_budget(3 * 36);
    CHECK(ex.run(nullptr, {x}, out)["peak_bytes"] == 108);

    // Host-side checks before the call, then the plugin's own.
    Tensor short_x({3, 4});
    short_x.data.resize(5);
    CHECK_THROWS_WITH(ex.run(nullptr, {short_x}, out),
                      Catch::Contains("input 'x' has shape [3, 4] but 5 values"));
    CHECK_THROWS_WITH(ex.run(nullptr, {"x"}, {x}, {"y", "z"}, out),
                      Catch::Contains("1 output tensors but 2 names"));
    Tensor wide({3, 5});
    std::vector<Tensor> wide_out{Tensor({3, 5})};
    CHECK_THROWS_WITH(ex.run(nullptr, {wide}, wide_out),
                      Catch::EndsWith("run: shapes must be [B,4] -> [B,4]"));

    // Moving hands the one handle over; only one destroy follows.
    ExecutorClient moved(std::move(ex));
    CHECK(call_counter(doubler, "fixture_live_executors") == live_before + 1);
    CHECK(moved.describe()["device"] == "doubler");
    CHECK_THROWS_WITH(ex.set_budget(1),  // NOLINT(bugprone-use-after-move): that is the point
                      Catch::EndsWith("executor used after being moved from"));
  }
  CHECK(call_counter(doubler, "fixture_live_executors") == live_before);  // destroy was called
  CHECK(live_blobs(doubler) == 0);
}

TEST_CASE("an executor whose create fails gives an Error and no handle", "[plugins][unit]") {
  const LoadedPlugin& failing = plugin(FRUGAL_KIND_EXECUTOR, "failing");
  try {
    ExecutorClient ex(failing, relu_model());
    FAIL("create did not throw");
  } catch (const PluginCallError& e) {
    CHECK(e.status == FRUGAL_ERR_UNSUPPORTED);
    CHECK(std::string(e.what()) == "failing (" + in_scan("failing_executor.so") +
                                       "): create: op 'Frobnicate' (node 'f1') is not supported");
  }
  CHECK(call_counter(failing, "fixture_live_executors") == 0);
}

TEST_CASE("a model given to an executor without create_releasing goes as bytes, and is emptied",
          "[plugins][unit]") {
  const LoadedPlugin& doubler = plugin(FRUGAL_KIND_EXECUTOR, "doubler");
  REQUIRE(doubler.extension(FRUGAL_EXT_HOST_WEIGHTS, FRUGAL_HOST_WEIGHTS_EXT_BASE_SIZE) == nullptr);
  Graph g = relu_model();
  const size_t bytes = save_onnx_bytes(g).size();
  ExecutorClient ex(doubler, std::move(g));
  CHECK(g.nodes.empty());
  CHECK(ex.describe()["model_bytes"] == bytes);  // the old path: the whole model as ONNX bytes
}

TEST_CASE("an executor's own refusal of its inputs at create is reported", "[plugins][unit]") {
  const LoadedPlugin& doubler = plugin(FRUGAL_KIND_EXECUTOR, "doubler");
  CHECK_NOTHROW(ExecutorClient(doubler, relu_model(), nullptr));
  CHECK_THROWS_WITH(ExecutorClient(doubler, std::string()), Catch::EndsWith("create: no model bytes"));
}
