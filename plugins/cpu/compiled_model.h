// A model compiled for the CPU executor: activation tensors, schedulable layers
// (a node, plus the BatchNormalization / activations / Dropout / Identity that run
// in place right after it), their kernels, and the byte accounting per layer.
//
// Samples: when every activation keeps the batch on axis 0 and no op mixes
// samples, the model is "batched": a run may have any number B of samples and a
// plan may split them. Otherwise the whole request is a single sample (B = 1,
// inputs exactly as declared).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "frugal/plugin.h"
#include "graph/graph.h"
#include "kernels/kernel.h"

namespace frugal::cpu {

struct ActivationTensor {
  std::string name;
  Dims dims;                   // at the declared batch
  int64_t sample_elems = 0;    // elements of one sample (batched) or of the whole tensor
  int producer = -1;           // layer index; -1: a network input
  std::vector<int> consumers;  // distinct layers reading it, ascending
  bool is_input = false, is_output = false;
};

struct Layer {
  std::string name;                    // the head node's name (made unique)
  std::vector<std::string> ops;        // head op first, then the bundled ops
  std::vector<std::string> nodes;      // node names, same order
  std::vector<int> inputs;             // distinct activation tensors read, in first-use order
  std::vector<int> node_inputs;        // per head-node input: activation tensor or -1 (constant / omitted)
  std::vector<Dims> constant_dims;     // per head-node input: dims of constants (others unused)
  int output = -1;                     // activation tensor written
  std::unique_ptr<Kernel> kernel;
  int64_t macs_per_sample = 0;
};

class CompiledModel {
 public:
  // Compiles `g` (shapes from its declared input shapes; a symbolic dim 0 is the
  // batch). Throws sdk::Failure(FRUGAL_ERR_UNSUPPORTED) listing every node this
  // executor cannot run, frugal::Error for a malformed model.
  // `threads`: what the kernels will run with (a conv's workspace depends on it).
  CompiledModel(const Graph& g, int threads);

  bool batched() const { return batched_; }
  std::string not_batched_reason() const { return not_batched_reason_; }
  int64_t declared_batch() const { return declared_batch_; }

  const std::vector<ActivationTensor>& tensors() const { return tensors_; }
  const std::vector<Layer>& layers() const { return layers_; }
  const std::vector<int>& inputs() const { return inputs_; }
  const std::vector<int>& outputs() const { return outputs_; }
  int layer_index(const std::string& name) const;  // -1 if none

  // Dims of tensor t for n samples (batched: dim 0 = n; else n must be 1).
  Dims dims_at(int t, int64_t n) const;
  uint64_t sample_bytes(int t) const { return uint64_t(tensors_[size_t(t)].sample_elems) * sizeof(float); }
  uint64_t bytes(int t, int64_t n) const { return sample_bytes(t) * uint64_t(n); }
  // in / out / ws bytes of layer l at n samples.
  frugal_layer_bytes layer_bytes(int l, int64_t n) const;
  // The input dims a kernel call of layer l on n samples gets (one per head-node input).
  std::vector<Dims> call_dims(int l, int64_t n) const;

 private:
  std::vector<ActivationTensor> tensors_;
  std::vector<Layer> layers_;
  std::vector<int> inputs_, outputs_;
  bool batched_ = true;
  std::string not_batched_reason_;
  int64_t declared_batch_ = 1;
};

}  // namespace frugal::cpu
