#include "memory_model.h"

#include <algorithm>
#include <map>

namespace exec_test {

int MemoryModel::tensor_id(const std::string& name) {
  auto it = std::find(tensor_names_.begin(), tensor_names_.end(), name);
  if (it != tensor_names_.end()) return int(it - tensor_names_.begin());
  tensor_names_.push_back(name);
  sample_bytes_.push_back(0);
  producer_.push_back(-1);
  consumer_count_.push_back(0);
  is_output_.push_back(false);
  return int(tensor_names_.size() - 1);
}

MemoryModel::MemoryModel(PluginExecutor& ex) : ex_(ex), d_(ex.describe()) {
  for (const auto& in : d_["inputs"]) {
    const int t = tensor_id(in["name"].get<std::string>());
    uint64_t elems = 1;
    const auto shape = in["shape"].get<std::vector<int64_t>>();
    for (size_t k = d_["batched"].get<bool>() ? 1 : 0; k < shape.size(); ++k) elems *= uint64_t(shape[k]);
    sample_bytes_[size_t(t)] = elems * 4;
    inputs_.push_back(t);
  }
  layers_ = d_["layers"].size();
  for (size_t l = 0; l < layers_; ++l) {
    const auto& L = d_["layers"][l];
    std::vector<int> ins;
    for (const auto& n : L["input_tensors"]) {
      const int t = tensor_id(n.get<std::string>());
      ins.push_back(t);
      ++consumer_count_[size_t(t)];
    }
    const int out = tensor_id(L["output_tensor"].get<std::string>());
    producer_[size_t(out)] = int(l);
    sample_bytes_[size_t(out)] = ex.layer_bytes(int(l), 1).out_bytes;
    layer_inputs_.push_back(ins);
    layer_output_.push_back(out);
  }
  for (const auto& o : d_["outputs"]) is_output_[size_t(tensor_id(o["name"].get<std::string>()))] = true;
}

uint64_t MemoryModel::peak(const std::vector<Step>& steps, int64_t batch) const {
  uint64_t live = 0, peak = 0;
  std::vector<std::vector<int>> consumed(tensor_names_.size(), std::vector<int>(size_t(batch), 0));
  for (int t : inputs_) live += sample_bytes_[size_t(t)] * uint64_t(batch);
  peak = live;
  for (int t : inputs_)
    if (consumer_count_[size_t(t)] == 0 && !is_output_[size_t(t)])
      live -= sample_bytes_[size_t(t)] * uint64_t(batch);
  for (const Step& s : steps) {
    const uint64_t ws = ex_.layer_bytes(s.layer, int(s.count)).ws_bytes;
    const int out = layer_output_[size_t(s.layer)];
    live += sample_bytes_[size_t(out)] * uint64_t(s.count) + ws;
    peak = std::max(peak, live);
    live -= ws;
    for (int t : layer_inputs_[size_t(s.layer)])
      for (int64_t j = s.first; j < s.first + s.count; ++j)
        if (++consumed[size_t(t)][size_t(j)] == consumer_count_[size_t(t)] && !is_output_[size_t(t)])
          live -= sample_bytes_[size_t(t)];
    if (consumer_count_[size_t(out)] == 0 && !is_output_[size_t(out)])
      live -= sample_bytes_[size_t(out)] * uint64_t(s.count);
  }
  return peak;
}

std::vector<Step> MemoryModel::whole_batch(int64_t batch) const {
  std::vector<Step> v;
  for (size_t l = 0; l < layers_; ++l) v.push_back(Step{int(l), 0, batch});
  return v;
}

std::vector<Step> MemoryModel::random_plan(int64_t batch, std::mt19937_64& rng) const {
  // Each layer takes its samples in order: next[l] is the first sample of its next step.
  std::vector<int64_t> next(layers_, 0);
  auto ready = [&](size_t l, int64_t j) {
    for (int t : layer_inputs_[l]) {
      const int p = producer_[size_t(t)];
      if (p >= 0 && next[size_t(p)] <= j) return false;
    }
    return true;
  };
  std::vector<Step> steps;
  size_t remaining = layers_ * size_t(batch);
  while (remaining > 0) {
    std::vector<size_t> candidates;
    for (size_t l = 0; l < layers_; ++l)
      if (next[l] < batch && ready(l, next[l])) candidates.push_back(l);
    const size_t l = candidates[rng() % candidates.size()];
    const int64_t j = next[l];
    int64_t n = 1;
    const int64_t want = 1 + int64_t(rng() % uint64_t(batch));
    while (n < want && j + n < batch && ready(l, j + n)) ++n;
    next[l] += n;
    remaining -= size_t(n);
    steps.push_back(Step{int(l), j, n});
  }
  return steps;
}

nlohmann::json MemoryModel::to_json(const std::vector<Step>& steps, const nlohmann::json& d) {
  nlohmann::json arr = nlohmann::json::array();
  for (const Step& s : steps)
    arr.push_back({{"layer", d["layers"][size_t(s.layer)]["name"]}, {"first", s.first}, {"count", s.count}});
  return {{"steps", arr}};
}

}  // namespace exec_test
