// XGBoost through its C API (libxgboost-dev): a booster trained on rows of
// features, saved to and loaded from XGBoost's own JSON model, predicting rows.
// Training is deterministic: one thread, a fixed seed, the exact tree method.
#pragma once

#include <string>
#include <vector>

namespace frugal::predictor {

// Row-major features, one row per point.
struct Rows {
  size_t columns = 0;
  std::vector<float> values;
  size_t count() const { return columns ? values.size() / columns : 0; }
  void add(const std::vector<double>& row);
};

enum class Mode { Forest, Boosted };       // random forest (perf4sight) or gradient boosting
Mode parse_mode(const std::string& name);  // "forest" | "boosted"; throws naming the options
const char* mode_name(Mode m);

class Booster {
 public:
  Booster();
  ~Booster();
  Booster(const Booster&) = delete;
  Booster& operator=(const Booster&) = delete;

  void train(const Rows& x, const std::vector<float>& y, Mode mode, int seed);
  void load_json(const std::string& model);
  std::string save_json() const;
  std::vector<float> predict(const Rows& x) const;

 private:
  void* handle_ = nullptr;  // BoosterHandle
};

}  // namespace frugal::predictor
