// Test helper: small gated networks (docs/GATING.md) built node by node, with
// switches to turn each into one of the near misses.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "frugal/model/graph.h"

namespace gate_test {

struct GatedGraphOptions {
  int64_t channels = 6;       // C of the input x [N, C, H, W]
  int64_t kernels = 8;        // M: output channels of the gated conv
  int64_t gate_channels = 8;  // K of the gate's 1x1 conv (!= kernels: a mismatch)
  int64_t size = 7;           // H = W
  int64_t kernel = 3;         // the two convs' kernels: 3x3 (padded by 1) or 1x1
  float threshold = 0.5f;
  float gate_bias = 0.0f;         // added to every gate bias (moves the activity)
  bool pool_first = false;        // Conv1x1(GAP(x)) instead of GAP(Conv1x1(x))
  bool batchnorm = true;          // conv -> BN -> Relu -> Mul
  bool mul_before_bn = false;     // conv -> Mul -> BN -> Relu: BN after the Mul (a near miss)
  bool soft = false;              // Mul(conv, Sigmoid(...)): no threshold
  bool strict = false;            // Greater instead of GreaterOrEqual
  bool gate_reads_other = false;  // the gate reads Relu(x), the conv x
  bool add_after = false;         // the gated value goes into an Add (a near miss)
  bool maxpool = true;            // Mul -> MaxPool 2x2 -> second conv
  bool second_conv = true;        // the gated value goes through a second conv and Relu (else straight on)
  bool gemm_tail = true;  // second conv -> Relu -> Flatten -> Gemm (else the second conv is the output)
  // conv1's geometry beyond `kernel` (each empty: kernel x kernel, stride 1, pads kernel / 2,
  // no dilation), for the reduced conv's arranged input (strides, uneven pads, dilations).
  std::vector<int64_t> conv1_shape, conv1_strides, conv1_pads, conv1_dilations;
  uint64_t seed = 1;
};

// x -> Conv 3x3 or 1x1 (gated) -> [BN] -> Relu -> Mul(gate) -> [MaxPool] -> Conv 3x3 -> Relu -> Flatten ->
// Gemm. Input "x" [N, C, H, W] with N symbolic; output "y".
frugal::Graph gated_graph(const GatedGraphOptions& o = {});

// How many blocks of `block` consecutive values hold a value that is not zero: the active
// input columns of the Gemm after the Flatten, a channel's H x W values a block.
int64_t nonzero_blocks(const std::vector<double>& values, size_t block);

}  // namespace gate_test
