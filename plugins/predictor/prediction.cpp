#include "prediction.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>
#include <utility>

#include "frugal/error.h"
#include "layer_facts.h"
#include "layer_features.h"
#include "predictor_file.h"
#include "step_overhead.h"
#include "xgb_booster.h"

namespace frugal::predictor {

namespace {

// Features whose range the per-layer warning checks: sizes the trees cannot
// extend. The batch size is checked once for the whole table (batch_warning).
const char* const kRangeChecked[] = {"n", "m", "k", "ip", "macs", "bytes_moved", "work"};

void check_families(const nlohmann::json& file, const std::vector<LayerFacts>& facts,
                    const std::string& origin) {
  const auto families = file["families"].get<std::vector<std::string>>();
  for (const LayerFacts& f : facts)
    if (std::find(families.begin(), families.end(), f.family) == families.end())
      throw Error(origin + ": layer '" + f.name + "' is a " + f.kind + " (family " + f.family +
                  "), a kind of layer this predictor never saw in training (it knows: " +
                  nlohmann::json(families).dump() + ")");
}

// 3 for 3.0, 1.5e+09 for 1.5e9: as people write numbers.
std::string number(double v) {
  std::ostringstream s;
  s << std::setprecision(6) << v;
  return s.str();
}

std::string extrapolation(const nlohmann::json& ranges, const LayerFacts& f, const std::vector<double>& x) {
  const auto& names = feature_names();
  for (const char* key : kRangeChecked) {
    const size_t c = size_t(std::find(names.begin(), names.end(), key) - names.begin());
    const double lo = ranges[key][0].get<double>(), hi = ranges[key][1].get<double>();
    if (float(x[c]) < float(lo) || float(x[c]) > float(hi))
      return "warning: layer '" + f.name + "': " + key + " = " + number(x[c]) +
             " is outside the training range [" + number(lo) + ", " + number(hi) +
             "]: the prediction extrapolates";
  }
  return "";
}

// One line for the table when batch sizes 1..upto leave the trained range,
// rather than the same line for every layer; "" when they do not.
std::string batch_warning(const nlohmann::json& ranges, int upto) {
  const double lo = ranges["batch"][0].get<double>(), hi = ranges["batch"][1].get<double>();
  if (1 >= lo && double(upto) <= hi) return "";
  return "warning: batch sizes 1.." + std::to_string(upto) + " leave the training range [" + number(lo) +
         ", " + number(hi) + "]: every layer's prediction there extrapolates";
}

bool measured_at(const nlohmann::json& layer, size_t i) {
  return layer.contains("source") && i < layer["source"].size() && layer["source"][i] == "measured" &&
         layer.contains("time_s") && i < layer["time_s"].size();
}

void check_bytes(const LayerFacts& f, int upto) {
  if (f.in_bytes.size() < size_t(upto) || f.out_bytes.size() < size_t(upto) ||
      f.ws_bytes.size() < size_t(upto))
    throw Error("cost table: layer '" + f.name + "' has bytes for batch 1.." +
                std::to_string(f.in_bytes.size()) + ", the prediction needs 1.." + std::to_string(upto));
}

// Appends the rows of one layer for batch 1..upto; returns its warning or "":
// a kind (kernel path) training never saw, else the first feature out of range.
std::string add_rows(const nlohmann::json& file, const std::vector<std::string>& families,
                     const std::vector<std::string>& kinds, const LayerFacts& f, int upto, Rows& rows) {
  std::string warning;
  if (std::find(kinds.begin(), kinds.end(), f.kind) == kinds.end())
    warning = "warning: layer '" + f.name + "' is a " + f.kind +
              ", a kernel path this predictor never saw in training: predicted from its other features";
  for (int b = 1; b <= upto; ++b) {
    const std::vector<double> x = features(f, b, families, kinds);
    rows.add(x);
    // Beyond the trained batch sizes, sizes that grow with the batch leave
    // their range too: that is batch_warning's line, not this layer's.
    if (warning.empty() && b <= file["ranges"]["batch"][1].get<double>())
      warning = extrapolation(file["ranges"], f, x);
  }
  return warning;
}

// Sets time_s and source of one layer for batch 1..upto from its predicted targets y[0..upto).
void set_times(const LayerFacts& f, int upto, const float* y, nlohmann::json& layer) {
  nlohmann::json time = nlohmann::json::array(), source = nlohmann::json::array();
  for (int b = 1; b <= upto; ++b) {
    const size_t i = size_t(b - 1);
    const bool keep = measured_at(layer, i);
    time.push_back(keep ? layer["time_s"][i].get<double>() : std::exp(double(y[i])) * work(f, b) / b);
    source.push_back(keep ? "measured" : "predicted");
  }
  for (const char* key : {"in_bytes", "out_bytes", "ws_bytes"}) {
    nlohmann::json first = nlohmann::json::array();
    for (int b = 1; b <= upto; ++b) first.push_back(layer[key][size_t(b - 1)]);
    layer[key] = first;
  }
  layer["time_s"] = time;
  layer["source"] = source;
  layer.erase("time_spread_s");
}

}  // namespace

nlohmann::json predict_table(const PredictorFile& predictor, const std::string& origin, Graph model,
                             nlohmann::json costs, int upto) {
  const nlohmann::json& file = predictor.header;
  if (upto < 1 || upto > 1024) throw Error("option 'upto' must be in 1..1024, got " + std::to_string(upto));
  check_predictor_matches(file, costs, origin);
  const std::vector<LayerFacts> facts = layer_facts(std::move(model), costs);
  check_families(file, facts, origin);
  // Every (layer, batch) in one call: the model is loaded and run once.
  const auto families = file["families"].get<std::vector<std::string>>();
  const auto kinds = file["kinds"].get<std::vector<std::string>>();
  Rows rows;
  nlohmann::json warnings = nlohmann::json::array();
  if (const std::string w = batch_warning(file["ranges"], upto); !w.empty()) warnings.push_back(w);
  for (const LayerFacts& f : facts) {
    check_bytes(f, upto);
    const std::string w = add_rows(file, families, kinds, f, upto, rows);
    if (!w.empty()) warnings.push_back(w);
  }
  Booster booster;
  booster.load_json(predictor.xgboost);
  const std::vector<float> y = rows.count() ? booster.predict(rows) : std::vector<float>{};
  for (size_t l = 0; l < facts.size(); ++l)
    set_times(facts[l], upto, &y[l * size_t(upto)], costs["layers"][l]);
  fill_step_overheads(file["step_overhead"], facts, costs);
  costs["batch_max"] = upto;
  costs["predictor"] = {{"file", origin}, {"mode", file["mode"]}, {"points", file["points"]}};
  costs["warnings"] = warnings;
  return costs;
}

}  // namespace frugal::predictor
