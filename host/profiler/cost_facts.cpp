#include "profiler/cost_facts.h"

#include <map>
#include <string>

#include "frugal/error.h"

namespace frugal {

void add_executor_facts(nlohmann::json& costs, const nlohmann::json& describe) {
  std::map<std::string, const nlohmann::json*> by_name;
  for (const auto& l : describe.at("layers")) by_name[l.value("name", std::string())] = &l;
  for (auto& layer : costs.at("layers")) {
    const auto it = by_name.find(layer.value("name", std::string()));
    if (it == by_name.end()) continue;
    for (const char* key : {"ops", "nodes", "algorithm", "macs_per_sample"})
      if (it->second->contains(key)) layer[key] = (*it->second)[key];
  }
}

nlohmann::json unmeasured_table(ExecutorClient& ex, const ProfileSubject& subject, int upto) {
  const nlohmann::json& d = ex.describe();
  std::vector<std::string> outputs;
  for (const auto& o : d.value("outputs", nlohmann::json::array())) outputs.push_back(o.value("name", ""));
  nlohmann::json layers = nlohmann::json::array();
  for (size_t i = 0; i < d.at("layers").size(); ++i) {
    const nlohmann::json& L = d["layers"][i];
    nlohmann::json out = {{"name", L.at("name")},
                          {"inputs", L.at("inputs")},
                          {"time_s", nlohmann::json::array()},
                          {"source", nlohmann::json::array()}};
    for (const char* key : {"in_bytes", "out_bytes", "ws_bytes"}) out[key] = nlohmann::json::array();
    for (int b = 1; b <= upto; ++b) {
      const LayerBytes lb = ex.layer_bytes(int(i), b);
      out["in_bytes"].push_back(lb.in_bytes);
      out["out_bytes"].push_back(lb.out_bytes);
      out["ws_bytes"].push_back(lb.ws_bytes);
    }
    if (std::count(outputs.begin(), outputs.end(), L.value("output_tensor", "")))
      out["network_output"] = true;
    layers.push_back(out);
  }
  nlohmann::json t = {{"model", subject.model_name},
                      {"model_hash", subject.model_hash},
                      {"executor", subject.executor},
                      {"device", d.value("device", "")},
                      {"threads", d.value("threads", nlohmann::json())},
                      {"batch_max", upto},
                      {"layers", layers}};
  if (d.contains("gate_activity")) t["gate_activity"] = d["gate_activity"];
  add_executor_facts(t, d);
  return t;
}

namespace {

void check_same(const nlohmann::json& a, const nlohmann::json& b, const char* key) {
  if (b.contains(key) && a.value(key, nlohmann::json()) != b[key])
    throw Error("the measured table is of " + std::string(key) + " " + b[key].dump() +
                ", the model runs on " + a.value(key, nlohmann::json()).dump());
}

}  // namespace

void merge_measured(nlohmann::json& table, const nlohmann::json& measured) {
  for (const char* key : {"executor", "device", "threads"}) check_same(table, measured, key);
  const auto& have = measured.at("layers");
  auto& want = table.at("layers");
  if (have.size() != want.size())
    throw Error("the measured table has " + std::to_string(have.size()) + " layers, the model " +
                std::to_string(want.size()) + ": it is of another model");
  const size_t upto = table.at("batch_max").get<size_t>();
  for (size_t l = 0; l < want.size(); ++l) {
    if (have[l].value("name", "") != want[l].value("name", ""))
      throw Error("the measured table's layer " + std::to_string(l + 1) + " is '" +
                  have[l].value("name", "") + "', the model's is '" + want[l].value("name", "") +
                  "': it is of another model");
    const auto& t = have[l].at("time_s");
    for (size_t i = 0; i < t.size() && i < upto; ++i) {
      const bool is_measured = !have[l].contains("source") || have[l]["source"].at(i) == "measured";
      while (want[l]["time_s"].size() <= i) want[l]["time_s"].push_back(0.0), want[l]["source"].push_back("");
      if (is_measured) want[l]["time_s"][i] = t[i], want[l]["source"][i] = "measured";
    }
    for (const char* k : {"step_overhead_s", "step_overhead_per_sample_s"})
      if (have[l].contains(k)) want[l][k] = have[l][k];
  }
}

}  // namespace frugal
