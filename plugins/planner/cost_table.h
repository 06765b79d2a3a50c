// The planner's input: per-layer time and memory for every batch size 1..B, as
// measured by an executor or filled in by a predictor (format: docs/COSTS.md).
// parse_cost_table() validates hard; everything downstream trusts the result.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace frugal::planner {

// Index of the network input among a layer's inputs (layers are 0..n-1).
constexpr int kNetworkInput = -1;

struct LayerCost {
  std::string name;
  std::vector<int> inputs;          // producer layer indices, kNetworkInput for the network input
  std::vector<double> time_s;       // per-sample seconds at batch b = index + 1
  std::vector<uint64_t> in_bytes;   // sum over the layer's inputs (one entry per listed input)
  std::vector<uint64_t> out_bytes;  // its one output tensor
  std::vector<uint64_t> ws_bytes;   // workspace while it runs
  std::vector<std::string>
      source;  // "measured", "predicted", "interpolated" or "fitted" per batch (may be empty)
  // The output is a network output: kept to the end of the request even when
  // other layers read it (the executors never free a network output).
  bool network_output = false;
  // Seconds every step of this layer costs beyond time_s x count: what a call
  // pays inside a plan and not when the profiler times the layer alone (weights
  // and inputs out of cache, allocation and moves). The layer's
  // "step_overhead_s", else the table's, else 0.
  double step_overhead_s = 0;
  // Seconds per sample a step pays beyond time_s (data out of cache at larger
  // batches): the layer's "step_overhead_per_sample_s", else 0.
  double step_overhead_per_sample_s = 0;
};

struct CostTable {
  std::string model;
  std::string executor;
  int batch_max = 0;           // B: the arrays hold batch sizes 1..B
  double step_overhead_s = 0;  // the table's "step_overhead_s": the default of its layers
  // A run's cost beyond its steps (the table's "run_overhead_s" and
  // "run_overhead_per_sample_s", else 0): copying inputs in and outputs out,
  // submitting. The same for every plan of a request, so it moves predictions
  // to what runs measure and never changes which plan is best.
  double run_overhead_s = 0, run_overhead_per_sample_s = 0;
  std::vector<LayerCost> layers;  // in execution order: producers before consumers

  // Derived by parse_cost_table(); activation bytes are proportional to the batch.
  uint64_t input_bytes_per_sample = 0;      // the network input tensor
  std::vector<std::vector<int>> consumers;  // per layer: layers reading its output (deduplicated)
  std::vector<int> input_consumers;         // layers reading the network input (deduplicated)

  int size() const { return static_cast<int>(layers.size()); }
  uint64_t out_per_sample(int layer) const { return layers[layer].out_bytes[0]; }
  // Bytes one sample of tensor `t` occupies (t = kNetworkInput or a layer index).
  uint64_t tensor_per_sample(int t) const {
    return t == kNetworkInput ? input_bytes_per_sample : out_per_sample(t);
  }
  const std::vector<int>& tensor_consumers(int t) const {
    return t == kNetworkInput ? input_consumers : consumers[t];
  }
  // Held until the request ends: a network output (read by no layer, or marked
  // "network_output"). The network input never is.
  bool kept_to_end(int t) const {
    return t != kNetworkInput && (consumers[t].empty() || layers[t].network_output);
  }
  // The layer's distinct input tensors (a layer listing one tensor twice holds it once).
  std::vector<int> distinct_inputs(int layer) const;
  int find(const std::string& name) const;  // -1 when absent
  // Per-sample seconds of one step of `batch` samples as the planners price it:
  // time_s plus the layer's step overhead shared by the step's samples, plus
  // its per-sample overhead. Every planner and the checker price plans through
  // this, so a step costs time_s[b-1] x b + step_overhead_s +
  // step_overhead_per_sample_s x b in all of them.
  double time(int layer, int batch) const {
    const LayerCost& l = layers[layer];
    return l.time_s[batch - 1] + l.step_overhead_s / batch + l.step_overhead_per_sample_s;
  }
  uint64_t out(int layer, int batch) const { return layers[layer].out_bytes[batch - 1]; }
  uint64_t ws(int layer, int batch) const { return layers[layer].ws_bytes[batch - 1]; }
};

// Parses and validates a cost table; throws frugal::Error naming the layer, the
// field and the index at fault. `origin` (e.g. a file name) prefixes messages.
CostTable parse_cost_table(const nlohmann::json& j, const std::string& origin = "cost table");
CostTable parse_cost_table_text(const std::string& text, const std::string& origin = "cost table");

nlohmann::json cost_table_to_json(const CostTable& t);

}  // namespace frugal::planner
