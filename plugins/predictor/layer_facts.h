// What the predictor knows about one schedulable layer: its head node's
// geometry (read from the model), the executor's facts (op list, kernel path,
// MACs: describe(), copied into the cost table by the host) and its exact
// in/out/ws bytes per batch (layer_bytes). Nothing here is estimated.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "frugal/model/graph.h"

namespace frugal::predictor {

struct LayerFacts {
  std::string name;
  std::string kind;    // head op and kernel path: "Conv (im2col + sgemm)", "Add"
  std::string family;  // conv, conv_1x1, conv_depthwise, conv_grouped, gemm, pool, elementwise, concat, ...;
                       // "+exp" appended where an exp-based op (SiLU's Sigmoid) is bundled after the head
  int64_t n = 1, m = 1;  // output and input channels (features for a Gemm)
  int64_t kh = 1, kw = 1, sh = 1, sw = 1, groups = 1;
  int64_t ih = 1, iw = 1, oh = 1, ow = 1;  // spatial sizes of the head's input and output
  int64_t weights = 0;                     // elements of the head's weight
  double macs_per_sample = 0;              // the executor's count, bundled ops included
  int bundled = 0;                         // nodes bundled after the head
  double gate_activity = 1;                // the activity gated layers were timed at
  double threads = 1;
  std::vector<double> in_bytes, out_bytes, ws_bytes;  // batch 1..B
};

// One entry per layer of `costs` (which must carry "ops", "nodes" and
// "macs_per_sample" per layer, as the host's tables do). Throws Error naming
// the layer when a fact is missing or the model has no such node.
// `model` is taken by value: shapes are inferred on it (move a model that is
// not needed after, rather than copy its weights).
std::vector<LayerFacts> layer_facts(Graph model, const nlohmann::json& costs);

}  // namespace frugal::predictor
