// Helpers for the folding tests: run a graph and its folded version on the same
// random inputs with the float64 reference evaluator and measure how far the
// outputs are apart; count BNs; and an independent, literal reading of
// BaN-OFF's Theorem 1 (the oracle the fold counts are checked against).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "frugal/model/graph.h"
#include "reference.h"
#include "zoo/graph_builder.h"

namespace frugal::fold_test {

// Folded and original outputs may differ by float rounding of the updated weights only.
constexpr double kTolerance = 1e-5;

// The fold report's entry for node `name`; throws when there is none.
const nlohmann::json& node_report(const nlohmann::json& report, const std::string& name);

// Conv options with symmetric padding `pad`.
zoo::ConvOptions conv_opts(int64_t pad, bool bias = false, int64_t groups = 1);

// Random inputs in [-1, 1) for every graph input, batch dim set to `batch`.
RefValues random_inputs(const Graph& g, int64_t batch, uint64_t seed);

// max |folded - original| / max |original| over every output (both graphs
// evaluated in float64 on the same inputs, every pixel including borders).
double relative_mismatch(const Graph& original, const Graph& folded, int64_t batch = 2, uint64_t seed = 7);

int count_op(const Graph& g, const std::string& op_type);

// Same nodes (op, inputs, outputs, attribute names) and the same initializers, bit for bit.
bool same_graph(const Graph& a, const Graph& b);

// A 64-bit FNV-1a digest of the nodes (op, inputs, outputs) and initializers
// (name and bytes): equal graphs have equal digests.
uint64_t graph_digest(const Graph& g);

// The part of `g` that computes `value`, with `value` as the only output (nodes
// it does not need are dropped).
Graph truncate_at(const Graph& g, const std::string& value);

// Theorem 1, read literally from the paper, independently of the folder's
// code: grow the component of BN node `bn` through nodes that are not
// non-affine (expressive ones are leaves), split it into the side entered
// through the BN's input and the side entered through its output; foldable iff
// one side holds more than the BN and every place where it meets the rest of
// the graph (a non-affine node, a graph input or output) is an expressive node.
// Knows nothing of padding, zero gamma or MaxPool signs: exactness refusals are
// asserted separately in the tests.
bool theorem_foldable(const Graph& g, int bn);
int theorem_foldable_count(const Graph& g);

// True when a side of the BN that Theorem 1 allows folding into ends at an
// expressive node whose output is also read outside that side (or is a graph
// output): the theorem, read at node level, stops there, but changing that
// node's weights would change what the other readers see.
bool theorem_side_shares_a_producer(const Graph& g, int bn);

// Sets one channel of a BN parameter ("weight", "bias", "running_mean",
// "running_var" as the zoo names them: "<bn>.weight", ...).
void set_bn_param(Graph& g, const std::string& bn, const std::string& param, int64_t channel, float value);
// Makes every gamma of `bn` positive (|gamma|).
void make_gamma_positive(Graph& g, const std::string& bn);

}  // namespace frugal::fold_test
