// Kernel gates in a graph (docs/GATING.md): the Learning Kernel-Activation
// Module of Pothos et al., written in standard ONNX as
//
//   y = Mul(conv_out, Cast(GreaterOrEqual(Sigmoid(GlobalAveragePool(Conv1x1(x))), t)))
//
// where conv_out is a Conv reading the same x, possibly followed by its
// BatchNormalization and activations, and the 1x1 conv and the pool may come in
// either order (they commute). A switch is 0 or 1 per sample and per output
// channel of the conv; every op between the Mul and the next Conv / Gemm must
// keep 0 at 0, so that those consumers may skip the switched-off channels.
// find_gates() recognises the pattern; a Mul that looks like a gate but breaks
// a rule is a near miss with the reason (it runs densely).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "frugal/model/graph.h"

namespace frugal {

struct GateMatch {
  std::string mul;                      // the Mul node applying the switch
  std::string conv;                     // the gated Conv node
  std::string input;                    // the value the conv and the gate both read
  std::vector<std::string> between;     // nodes from the conv to the Mul (BN, activations), in order
  std::string gate_conv;                // the gate's 1x1 Conv node
  std::vector<std::string> gate_nodes;  // every node of the gate, in graph order
  bool pool_first = false;              // GlobalAveragePool before the 1x1 conv
  bool strict = false;                  // Greater (on iff sw > t) instead of GreaterOrEqual
  float threshold = 0.5f;
  int64_t channels = 0;                // kernels switched: the conv's output channels
  int64_t input_channels = 0;          // channels of x
  std::vector<std::string> consumers;  // Conv / Gemm nodes reached through ops that keep zeros
};

struct GateNearMiss {
  std::string mul;     // the Mul node that looks like a gate
  std::string reason;  // why it is not gated (it runs densely)
};

struct GateAnalysis {
  std::vector<GateMatch> gates;                                  // in graph order of their Mul
  std::vector<GateNearMiss> near_misses;                         // in graph order
  const GateMatch* by_conv(const std::string& conv_node) const;  // nullptr if none
  const GateMatch* by_mul(const std::string& mul_node) const;
};

// Every gate of `g` and every near miss. Needs no shapes beyond the weights'.
GateAnalysis find_gates(const Graph& g);

// The ops that may sit between a gated conv and its Mul: BatchNormalization,
// activations, Dropout, Identity (what executors run in the conv's epilogue).
bool runs_after_conv(const Node& n);

// The ops that keep 0 at 0 channel by channel, so that a switched-off channel
// stays all zeros through them (Relu, MaxPool, Clip with min <= 0 <= max, ...).
bool keeps_zeros(const Graph& g, const Node& n);

}  // namespace frugal
