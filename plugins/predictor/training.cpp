#include "training.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "frugal/error.h"
#include "layer_facts.h"
#include "layer_features.h"
#include "predictor_file.h"
#include "step_overhead.h"
#include "xgb_booster.h"

namespace frugal::predictor {

namespace {

struct TrainingSet {
  Rows rows;
  std::vector<float> targets;
  std::vector<std::string> families, kinds;
  nlohmann::json members = nlohmann::json::array();
};

bool measured(const nlohmann::json& layer, size_t i) {
  if (!layer.contains("source")) return true;
  return i < layer["source"].size() && layer["source"][i] == "measured";
}

std::vector<std::string> sorted_families(const std::vector<std::vector<LayerFacts>>& all,
                                         std::vector<std::string>& kinds) {
  std::set<std::string> fam, kind;
  for (const auto& facts : all)
    for (const LayerFacts& f : facts) fam.insert(f.family), kind.insert(f.kind);
  kinds.assign(kind.begin(), kind.end());
  return {fam.begin(), fam.end()};
}

// The measured points of one model.
void add_points(const Example& e, const std::vector<LayerFacts>& facts, TrainingSet& s) {
  std::set<int> batches;
  int points = 0;
  const nlohmann::json& layers = e.costs.at("layers");
  for (size_t l = 0; l < facts.size(); ++l) {
    const std::vector<double> t = layers[l].at("time_s").get<std::vector<double>>();
    for (size_t i = 0; i < t.size() && i < facts[l].in_bytes.size(); ++i) {
      const int b = int(i + 1);
      const double w = work(facts[l], b), seconds = t[i] * b;
      if (!measured(layers[l], i) || seconds <= 0 || w <= 0) continue;
      s.rows.add(features(facts[l], b, s.families, s.kinds));
      s.targets.push_back(float(std::log(seconds / w)));
      batches.insert(b);
      ++points;
    }
  }
  s.members.push_back({{"model", e.costs.value("model", "")},
                       {"model_hash", e.costs.value("model_hash", "")},
                       {"layers", facts.size()},
                       {"batches", batches},
                       {"points", points}});
}

void check_same_target(const std::vector<Example>& examples) {
  for (const char* key : {"executor", "device", "threads"})
    for (const Example& e : examples)
      if (e.costs.value(key, nlohmann::json()) != examples[0].costs.value(key, nlohmann::json()))
        throw Error("training set: " + std::string(key) + " " + e.costs.value(key, nlohmann::json()).dump() +
                    " of '" + e.costs.value("model", "") + "' differs from " +
                    examples[0].costs.value(key, nlohmann::json()).dump() + " of '" +
                    examples[0].costs.value("model", "") + "': one predictor serves one executor and device");
}

nlohmann::json ranges(const Rows& rows) {
  nlohmann::json r = nlohmann::json::object();
  for (size_t c = 0; c < rows.columns; ++c) {
    double lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < rows.count(); ++i) {
      lo = std::min(lo, double(rows.values[i * rows.columns + c]));
      hi = std::max(hi, double(rows.values[i * rows.columns + c]));
    }
    r[feature_names()[c]] = {lo, hi};
  }
  return r;
}

nlohmann::json header(const Example& first, const TrainingSet& s, Mode mode, int seed) {
  return {{"format", "frugal-predictor"},
          {"format_version", kFormatVersion},
          {"predictor", "xgb"},
          {"mode", mode_name(mode)},
          {"seed", seed},
          {"target", "ln(batch seconds / work), work = MACs + window operations + bytes moved / 4"},
          {"executor", first.costs.value("executor", nlohmann::json())},
          {"device", first.costs.value("device", nlohmann::json())},
          {"threads", first.costs.value("threads", nlohmann::json())},
          {"machine", machine_name()},
          {"features", feature_names()},
          {"families", s.families},
          {"kinds", s.kinds},
          {"ranges", ranges(s.rows)},
          {"training_set", s.members},
          {"points", s.targets.size()}};
}

}  // namespace

std::string train_predictor_file(const std::vector<Example>& examples, const nlohmann::json& options) {
  if (examples.empty()) throw Error("training set is empty: give at least one profiled model");
  const Mode mode = parse_mode(options.value("mode", std::string("forest")));
  const int seed = options.value("seed", 0);
  const size_t min_points = options.value("min_points", size_t(20));
  check_same_target(examples);
  std::vector<std::vector<LayerFacts>> facts;
  for (const Example& e : examples) facts.push_back(layer_facts(e.model, e.costs));
  TrainingSet s;
  s.families = sorted_families(facts, s.kinds);
  for (size_t i = 0; i < examples.size(); ++i) add_points(examples[i], facts[i], s);
  if (s.targets.size() < min_points)
    throw Error("training set too small: " + std::to_string(s.targets.size()) +
                " measured (layer, batch) point" + (s.targets.size() == 1 ? "" : "s") + ", at least " +
                std::to_string(min_points) + " needed");
  Booster booster;
  booster.train(s.rows, s.targets, mode, seed);
  nlohmann::json file = header(examples[0], s, mode, seed);
  std::vector<const nlohmann::json*> tables;
  for (const Example& e : examples) tables.push_back(&e.costs);
  file["step_overhead"] = fit_step_overheads(facts, tables);
  file["xgboost"] = nlohmann::json::parse(booster.save_json());
  return file.dump(1) + "\n";
}

}  // namespace frugal::predictor
