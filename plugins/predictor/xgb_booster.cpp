#include "xgb_booster.h"

#include <xgboost/c_api.h>

#include <cmath>
#include <memory>
#include <nlohmann/json.hpp>
#include <utility>

#include "frugal/error.h"

namespace frugal::predictor {

namespace {

void check(int rc, const char* what) {
  if (rc != 0) throw Error(std::string("XGBoost: ") + what + ": " + XGBGetLastError());
}

struct Matrix {
  DMatrixHandle h = nullptr;
  explicit Matrix(const Rows& x) {
    check(XGDMatrixCreateFromMat(x.values.data(), x.count(), x.columns, std::nanf(""), &h), "matrix");
  }
  ~Matrix() { XGDMatrixFree(h); }
  Matrix(const Matrix&) = delete;
  Matrix& operator=(const Matrix&) = delete;
};

// Parameters of each mode; nthread 1 and the exact method make training reproducible.
std::vector<std::pair<const char*, const char*>> parameters(Mode mode) {
  std::vector<std::pair<const char*, const char*>> p = {
      {"nthread", "1"}, {"tree_method", "exact"}, {"objective", "reg:squarederror"}, {"verbosity", "0"}};
  if (mode == Mode::Forest)
    p.insert(p.end(), {{"num_parallel_tree", "200"},
                       {"eta", "1"},
                       {"subsample", "0.8"},
                       {"colsample_bynode", "0.8"},
                       {"max_depth", "12"},
                       {"min_child_weight", "1"},
                       {"lambda", "0"}});  // one round: a leaf is its samples' mean, not shrunk
  else
    p.insert(p.end(), {{"eta", "0.1"}, {"max_depth", "6"}, {"subsample", "1"}, {"min_child_weight", "1"}});
  return p;
}

int rounds(Mode mode) { return mode == Mode::Forest ? 1 : 300; }

}  // namespace

void Rows::add(const std::vector<double>& row) {
  if (columns == 0) columns = row.size();
  if (row.size() != columns) throw Error("features: rows of different lengths");
  for (double v : row) values.push_back(float(v));
}

Mode parse_mode(const std::string& name) {
  if (name == "forest") return Mode::Forest;
  if (name == "boosted") return Mode::Boosted;
  throw Error("option 'mode' must be \"forest\" or \"boosted\", got \"" + name + "\"");
}

const char* mode_name(Mode m) { return m == Mode::Forest ? "forest" : "boosted"; }

Booster::Booster() { check(XGBoosterCreate(nullptr, 0, &handle_), "create"); }

Booster::~Booster() { XGBoosterFree(handle_); }

void Booster::train(const Rows& x, const std::vector<float>& y, Mode mode, int seed) {
  Matrix m(x);
  check(XGDMatrixSetFloatInfo(m.h, "label", y.data(), y.size()), "labels");
  XGBoosterFree(handle_);
  handle_ = nullptr;
  check(XGBoosterCreate(&m.h, 1, &handle_), "create");
  for (const auto& [key, value] : parameters(mode)) check(XGBoosterSetParam(handle_, key, value), key);
  check(XGBoosterSetParam(handle_, "seed", std::to_string(seed).c_str()), "seed");
  // Trees fit the residual from base_score: start from the targets' mean (XGBoost 1.7 starts at 0.5).
  double mean = 0;
  for (float v : y) mean += double(v) / double(y.size());
  check(XGBoosterSetParam(handle_, "base_score", nlohmann::json(mean).dump().c_str()), "base_score");
  for (int i = 0; i < rounds(mode); ++i) check(XGBoosterUpdateOneIter(handle_, i, m.h), "training");
}

void Booster::load_json(const std::string& model) {
  check(XGBoosterLoadModelFromBuffer(handle_, model.data(), model.size()), "loading the model");
}

std::string Booster::save_json() const {
  bst_ulong len = 0;
  const char* bytes = nullptr;
  check(XGBoosterSaveModelToBuffer(handle_, R"({"format": "json"})", &len, &bytes), "saving the model");
  return std::string(bytes, len);
}

std::vector<float> Booster::predict(const Rows& x) const {
  Matrix m(x);
  const bst_ulong* shape = nullptr;
  bst_ulong dim = 0;
  const float* out = nullptr;
  const char* config =
      R"({"type": 0, "training": false, "iteration_begin": 0, "iteration_end": 0, "strict_shape": false})";
  check(XGBoosterPredictFromDMatrix(handle_, m.h, config, &shape, &dim, &out), "predicting");
  return std::vector<float>(out, out + x.count());
}

}  // namespace frugal::predictor
