// Test support for the planner: cost-table builders, random instances, and an
// exhaustive search over all layer-by-layer schedules that shares no code with
// the planner (its memory accounting is recomputed from sample counts).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "cost_table.h"
#include "plan_check.h"

namespace frugal::planner::test {

// A layer for table building: activation sizes are per sample; ws/time per batch.
struct LayerSpec {
  std::string name;
  std::vector<std::string> inputs;  // "" = network input
  uint64_t out_per_sample = 0;
  std::vector<uint64_t> ws;  // batch 1..B
  std::vector<double> time;  // per-sample seconds, batch 1..B
  double step_s = 0;         // "step_overhead_s": seconds every step of the layer costs on top
};

// Builds the JSON cost table (in_bytes derived from the inputs).
nlohmann::json make_table_json(const std::vector<LayerSpec>& layers, uint64_t input_per_sample,
                               int batch_max);

// Random instances: small linear chains, and small branched graphs
// (ResNet-like blocks with empty or conv shortcuts, inception/fire-like
// modules with 2-3 branches joined by concat).
std::vector<LayerSpec> random_linear(std::mt19937_64& rng, int n, int batch_max, uint64_t& input_per_sample);
std::vector<LayerSpec> random_branched(std::mt19937_64& rng, int batch_max, uint64_t& input_per_sample);

// Exhaustive search over schedules in which every layer takes samples in order:
// the state is, per layer, how many samples it has processed; a move runs one
// layer on 1..batch_max of the samples its inputs hold. Memory per state is the
// executor's model recomputed from those counts.
struct BruteForce {
  bool feasible = false;
  double best_total_s = 0;  // minimum total seconds within the budget
  uint64_t min_peak = 0;    // smallest peak of any schedule (budget-independent)
};
// step_s: seconds each step of layer k costs on top of count x time_s (the
// tables' step_overhead_s, passed separately so that the search prices steps
// with its own arithmetic); empty: none.
BruteForce brute_force(const CostTable& costs, int samples, uint64_t budget,
                       const std::vector<double>& step_s = {});

// Peak of a plan by the same count-based accounting (independent of check_plan).
uint64_t count_model_peak(const CostTable& costs, int samples, const std::vector<Step>& steps);

}  // namespace frugal::planner::test

namespace frugal::planner::test {

// A ResNet-50-shaped cost table (72 layers: stem, 16 bottleneck blocks with
// their Add joins and 4 projection shortcuts, pool, fc) with activation sizes
// from the real shapes (float32, 224x224 input), per-batch im2col workspace for
// k > 1 convolutions, and a per-sample time that falls with the batch.
nlohmann::json resnet50_like_table(int batch_max);

// A linear chain of n layers with activation sizes that vary along it.
nlohmann::json synthetic_chain_table(int n, int batch_max, uint64_t seed);

}  // namespace frugal::planner::test
