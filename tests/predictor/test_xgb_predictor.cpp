// The xgb predictor through the plugin ABI: trained on synthetic times (a law
// linear in MACs and bytes, predictor_util.h) it must reproduce them, on the
// training networks and on a pruning level it never saw; two trainings give the
// same file; every refusal names what is wrong.
#include <catch2/catch.hpp>
#include <cmath>
#include <fstream>
#include <set>
#include <sstream>

#include "frugal/error.h"
#include "loader/predictor_client.h"
#include "predictor_util.h"
#include "zoo/prune_channels.h"
#include "zoo/zoo.h"

using namespace frugal;
using nlohmann::json;
using predictor_test::xgb;

namespace {

constexpr int kUpto = 4;

struct Basis {
  std::vector<Graph> models;
  std::vector<json> tables;
  std::vector<TrainingExample> examples() const {
    std::vector<TrainingExample> e;
    for (size_t i = 0; i < models.size(); ++i) e.push_back({&models[i], tables[i]});
    return e;
  }
};

Graph pruned(const std::string& name, int percent) {
  Graph g = prune_channels(build_zoo_model(name), percent / 100.0);
  g.name += "_p" + std::to_string(percent);
  return g;
}

const Basis& basis() {
  static Basis b = [] {
    Basis s;
    for (const auto& [name, p] : std::vector<std::pair<std::string, int>>{
             {"resnet18", 0}, {"resnet18", 50}, {"squeezenet1_1", 0}, {"mobilenet_v2", 70}}) {
      s.models.push_back(pruned(name, p));
      s.tables.push_back(
          predictor_test::with_synthetic_times(predictor_test::unmeasured(s.models.back(), kUpto)));
    }
    return s;
  }();
  return b;
}

std::string write_file(const std::string& name, const std::string& bytes) {
  const std::string path = predictor_test::scratch(name);
  std::ofstream(path, std::ios::binary) << bytes;
  return path;
}

const std::string& trained(const std::string& mode) {
  static std::map<std::string, std::string> files;
  if (!files.count(mode)) files[mode] = train_predictor(xgb(), basis().examples(), {{"mode", mode}});
  return files[mode];
}

// Share of (layer, batch) points of `g` predicted within 10% of the synthetic law.
double share_within_10(const std::string& predictor_file, const Graph& g, int upto) {
  const json table = predictor_test::unmeasured(g, upto);
  const json out = predict_costs(xgb(), g, table, {{"upto", upto}, {"file", predictor_file}});
  int good = 0, all = 0;
  for (const auto& layer : out["layers"])
    for (int b = 1; b <= upto; ++b) {
      const double want = predictor_test::synthetic_seconds(layer, b) / b;
      const double got = layer["time_s"][size_t(b - 1)].get<double>();
      good += std::fabs(got - want) <= 0.1 * want;
      ++all;
    }
  INFO(g.name << ": " << good << " of " << all << " within 10%");
  CHECK(all > 0);
  return double(good) / all;
}

}  // namespace

TEST_CASE("xgb fits a synthetic law on its training networks and an unseen pruning level",
          "[predictor][unit]") {
  for (const std::string mode : {"forest", "boosted"}) {
    INFO("mode " << mode);
    const std::string path = write_file("fit_" + mode + ".json", trained(mode));
    CHECK(share_within_10(path, basis().models[0], kUpto) >= 0.9);
    CHECK(share_within_10(path, basis().models[2], kUpto) >= 0.9);
    CHECK(share_within_10(path, pruned("resnet18", 30), kUpto) >= 0.8);
  }
}

TEST_CASE("xgb: predicted entries are marked, measured ones kept, memory exact", "[predictor][unit]") {
  const std::string path = write_file("marks.json", trained("forest"));
  const Graph& g = basis().models[0];
  json table = predictor_test::unmeasured(g, kUpto);
  table["layers"][0]["time_s"] = {123e-6};
  table["layers"][0]["source"] = {"measured"};
  table["layers"][0]["step_overhead_s"] = 1e-3;
  const json out = predict_costs(xgb(), g, table, {{"upto", kUpto}, {"file", path}});
  // Step overheads: a measured one kept, the others the training set's (all 4 us there).
  CHECK(out["layers"][0]["step_overhead_s"] == 1e-3);
  CHECK(out["layers"][1]["step_overhead_s"].get<double>() == Approx(predictor_test::kSyntheticStepOverhead));
  CHECK(out["step_overhead_s"].get<double>() == Approx(predictor_test::kSyntheticStepOverhead));
  CHECK(out["batch_max"] == kUpto);
  CHECK(out["layers"][0]["time_s"][0] == 123e-6);
  CHECK(out["layers"][0]["source"] == json({"measured", "predicted", "predicted", "predicted"}));
  CHECK(out["layers"][1]["source"][0] == "predicted");
  for (size_t l = 0; l < table["layers"].size(); ++l)
    for (const char* key : {"in_bytes", "out_bytes", "ws_bytes"})
      CHECK(out["layers"][l][key] == table["layers"][l][key]);
}

TEST_CASE("xgb: training is deterministic, the file records what it was trained on", "[predictor][unit]") {
  for (const std::string mode : {"forest", "boosted"})
    CHECK(train_predictor(xgb(), basis().examples(), {{"mode", mode}}) == trained(mode));
  const json f = json::parse(trained("forest"));
  CHECK(f["format"] == "frugal-predictor");
  CHECK(f["format_version"] == 4);
  // Every kind (head op and kernel path) of the training tables, in order: the codes of feature "kind".
  CHECK(f["features"][1] == "kind");
  std::set<std::string> kinds;
  for (const json& t : basis().tables)
    for (const json& l : t["layers"]) {
      const std::string path = l.value("algorithm", std::string());
      kinds.insert(l["ops"][0].get<std::string>() + (path.empty() ? "" : " (" + path + ")"));
    }
  CHECK(f["kinds"] == json(std::vector<std::string>(kinds.begin(), kinds.end())));
  CHECK(f["step_overhead"]["default"].get<double>() == Approx(predictor_test::kSyntheticStepOverhead));
  CHECK(f["executor"] == "cpu");
  CHECK(f["threads"] == 1);
  CHECK(f["mode"] == "forest");
  CHECK(f["training_set"].size() == 4);
  CHECK(f["training_set"][0]["model"] == "resnet18_p0");
  CHECK(f["training_set"][0]["batches"] == json({1, 2, 3, 4}));
  CHECK(f["xgboost"].contains("learner"));
  CHECK(train_predictor(xgb(), basis().examples(), {{"mode", "forest"}, {"seed", 7}}) != trained("forest"));
}

TEST_CASE("xgb refuses bad training sets", "[predictor][unit]") {
  CHECK_THROWS_WITH(train_predictor(xgb(), {}, json::object()), Catch::Contains("training set is empty"));
  CHECK_THROWS_WITH(train_predictor(xgb(), basis().examples(), {{"min_points", 100000}}),
                    Catch::Contains("training set too small") && Catch::Contains("at least 100000 needed"));
  std::vector<TrainingExample> mixed = basis().examples();
  mixed[1].costs["device"] = "another device";
  CHECK_THROWS_WITH(train_predictor(xgb(), mixed, json::object()),
                    Catch::Contains("one predictor serves one executor and device"));
  CHECK_THROWS_WITH(train_predictor(xgb(), basis().examples(), {{"mode", "linear"}}),
                    Catch::Contains("option 'mode' must be \"forest\" or \"boosted\""));
  std::vector<TrainingExample> unmeasured = basis().examples();
  for (auto& e : unmeasured)
    for (auto& l : e.costs["layers"]) l["source"] = json::array();
  CHECK_THROWS_WITH(train_predictor(xgb(), unmeasured, json::object()),
                    Catch::Contains("training set too small: 0 measured"));
}

TEST_CASE("xgb refuses files of another version, executor, device, threads or machine", "[predictor][unit]") {
  const Graph& g = basis().models[0];
  const json table = predictor_test::unmeasured(g, 2);
  const auto refused = [&](const std::string& key, const json& value, const std::string& message) {
    json f = json::parse(trained("forest"));
    f[key] = value;
    const std::string path = write_file("bad_" + key + ".json", f.dump());
    CHECK_THROWS_WITH(predict_costs(xgb(), g, table, {{"upto", 2}, {"file", path}}),
                      Catch::Contains(path) && Catch::Contains(message));
  };
  refused("format_version", 1, "predictor file format version 1, this predictor reads version 4");
  refused("executor", "vulkan", "trained for executor \"vulkan\", the model is on executor \"cpu\"");
  refused("device", "elsewhere", "trained for device \"elsewhere\"");
  refused("threads", 16, "trained for threads 16, the model is on threads 1");
  refused("machine", "another processor", "trained on machine \"another processor\"");
  refused("features", json::array({"batch"}), "feature schema differs");
  const std::string junk = write_file("junk.json", "[1, 2]");
  CHECK_THROWS_WITH(predict_costs(xgb(), g, table, {{"upto", 2}, {"file", junk}}),
                    Catch::Contains("not a JSON object"));
  CHECK_THROWS_WITH(predict_costs(xgb(), g, table, {{"upto", 2}, {"file", junk + ".absent"}}),
                    Catch::Contains("cannot be read"));
  CHECK_THROWS_WITH(predict_costs(xgb(), g, table, {{"upto", 2}}),
                    Catch::Contains("give the predictor file"));
}

TEST_CASE("xgb refuses a layer kind it never saw and warns when it extrapolates", "[predictor][unit]") {
  // Trained on squeezenet alone: no Add, no Gemm.
  const Basis& b = basis();
  const std::string only_squeeze =
      write_file("squeeze.json", train_predictor(xgb(), {{&b.models[2], b.tables[2]}}, json::object()));
  const Graph& resnet = b.models[0];
  CHECK_THROWS_WITH(predict_costs(xgb(), resnet, predictor_test::unmeasured(resnet, 2),
                                  {{"upto", 2}, {"file", only_squeeze}}),
                    Catch::Contains("a kind of layer this predictor never saw in training") &&
                        Catch::Contains("family elementwise"));
  // EfficientNet's Sigmoid (SiLU) is priced apart from Relu: the basis has none.
  // (The cpu executor joins a SiLU to the conv before it; with that conv's output
  // also a graph output, the first SiLU's Sigmoid stays a layer of its own.)
  Graph effnet = build_zoo_model("efficientnet_b0");
  for (const frugal::Node& n : effnet.nodes)
    if (n.op_type == "Sigmoid") {
      effnet.outputs.push_back(n.inputs[0]);
      break;
    }
  CHECK_THROWS_WITH(
      predict_costs(xgb(), effnet, predictor_test::unmeasured(effnet, 1),
                    {{"upto", 1}, {"file", write_file("basis.json", trained("forest"))}}),
      Catch::Contains("is a Sigmoid (family elementwise_exp), a kind of layer this predictor never saw"));
  // Trained on batch 1..4: batch 8 extrapolates, said once for the table
  // (not once per layer: resnet's 89 layers gave 89 identical lines).
  const std::string path = write_file("extra.json", trained("forest"));
  const json out =
      predict_costs(xgb(), resnet, predictor_test::unmeasured(resnet, 8), {{"upto", 8}, {"file", path}});
  REQUIRE(out["warnings"].size() == 1);
  CHECK(out["warnings"][0].get<std::string>() ==
        "warning: batch sizes 1..8 leave the training range [1, 4]: every layer's prediction there "
        "extrapolates");
  const json inside =
      predict_costs(xgb(), resnet, predictor_test::unmeasured(resnet, 4), {{"upto", 4}, {"file", path}});
  CHECK(inside["warnings"].empty());
  // A layer larger than any in training is named on its own line (vgg16_bn's
  // 224x224 3x3 convs and 400 MB Gemm against the toy-sized basis).
  const Graph vgg = build_zoo_model("vgg16_bn");
  const json big =
      predict_costs(xgb(), vgg, predictor_test::unmeasured(vgg, 1), {{"upto", 1}, {"file", path}});
  REQUIRE_FALSE(big["warnings"].empty());
  CHECK_THAT(big["warnings"][0].get<std::string>(),
             Catch::StartsWith("warning: layer '") && Catch::EndsWith("the prediction extrapolates"));
}

TEST_CASE("xgb predicts a kernel path it never saw from the other features, with a warning",
          "[predictor][unit]") {
  const Basis& b = basis();
  const std::string path = write_file("paths.json", trained("forest"));
  json table = predictor_test::unmeasured(b.models[0], 2);
  const json known = predict_costs(xgb(), b.models[0], table, {{"upto", 2}, {"file", path}});
  CHECK(known["warnings"].empty());
  json& conv = table["layers"][0];
  REQUIRE(conv["ops"][0] == "Conv");
  conv["algorithm"] = "a path no table has";
  const json out = predict_costs(xgb(), b.models[0], table, {{"upto", 2}, {"file", path}});
  REQUIRE(out["warnings"].size() == 1);
  CHECK(out["warnings"][0] == "warning: layer '" + conv["name"].get<std::string>() +
                                  "' is a Conv (a path no table has), a kernel path this predictor never saw "
                                  "in training: predicted from its other features");
  for (int i = 0; i < 2; ++i) {
    const double t = out["layers"][0]["time_s"][size_t(i)].get<double>();
    CHECK((std::isfinite(t) && t > 0));
  }
  // The other layers are predicted as before.
  CHECK(out["layers"][1]["time_s"] == known["layers"][1]["time_s"]);
}
