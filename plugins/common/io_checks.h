// The checks of the executor ABI's arguments that both executors make the same
// way: the options object, the request's input and output tensors, layer and
// batch arguments; and how bytes are written in messages.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/layer_graph.h"
#include "common/plan.h"
#include "frugal/plugin.h"

namespace frugal::exec {

// "12.3 MB (12345678 bytes)"
std::string format_bytes(uint64_t bytes);

// The options JSON as an object (null / empty text: an empty object). Throws
// frugal::Error naming `example` ({"threads": 2}) when it is not one.
nlohmann::json parse_options_object(const char* json, const char* example);

// Matches the inputs to the model's (by name, else by position) into `ordered`
// and checks dtype, shape (dim 0 = B for batched models), bytes and data.
// Returns the request's batch B. Throws frugal::Error naming the input.
int64_t check_inputs(const LayerGraph& m, const frugal_tensor* inputs, size_t n,
                     std::vector<const frugal_tensor*>& ordered);
// The same for the output tensors of a request of `batch` samples.
void check_outputs(const LayerGraph& m, frugal_tensor* outputs, size_t n, int64_t batch,
                   std::vector<frugal_tensor*>& ordered);

// A run's arguments, checked: inputs and outputs in model order, the batch,
// and the plan (plan_json NULL: the whole batch, layer by layer; the plan's
// order and coverage are checked when it is simulated).
struct Request {
  std::vector<const frugal_tensor*> inputs;
  std::vector<frugal_tensor*> outputs;
  int64_t batch = 1;
  Plan plan;
};
Request check_request(const LayerGraph& m, const char* plan_json, const frugal_tensor* inputs,
                      size_t n_inputs, frugal_tensor* outputs, size_t n_outputs);
// check_request's checks of the inputs and outputs alone (r.plan left empty), for an
// executor that keeps the plan it parsed for the same plan text and batch before.
Request check_io(const LayerGraph& m, const frugal_tensor* inputs, size_t n_inputs, frugal_tensor* outputs,
                 size_t n_outputs);

// `what` ("layer_bytes", "time_layer"): layer index in range, batch >= 1.
void check_layer_and_batch(const LayerGraph& m, const char* what, int layer, int batch);
// time_layer's further arguments: a batch the model can take, repeats >= 1.
void check_time_layer(const LayerGraph& m, int layer, int batch, int repeats);
// Median and spread (largest - smallest) of `times` (not empty); sorts them.
void median_and_spread(std::vector<double>& times, double& median, double& spread);

// describe()'s model part: batched (and why not), layers (name, ops, nodes,
// inputs, shapes, MACs, in/out bytes per sample, ws bytes at batch 1; the
// kernel's "algorithm" where `algorithm` is given), inputs and outputs. Each
// executor adds its device keys.
nlohmann::json describe_graph(const LayerGraph& m,
                              const std::function<std::string(int)>& algorithm = nullptr);

}  // namespace frugal::exec
