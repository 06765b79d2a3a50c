// A model compiled for the Vulkan executor: activation tensors, schedulable
// layers (a node, plus the BatchNormalization / activations / Dropout / Identity
// that run in place right after it), their kernels, and the byte accounting
// per layer. The layer rules and the in/out/ws definitions are those of the
// cpu executor (plugins/cpu/compiled_model.h), so cost tables and plans mean
// the same on both; phase 2 moves this into a library both executors share.
//
// Samples: when every activation keeps the batch on axis 0 and no op mixes
// samples, the model is "batched": a run may have any number B of samples.
// Otherwise a request is a single sample (inputs exactly as declared).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "frugal/plugin.h"
#include "graph/graph.h"
#include "vk_kernel.h"

namespace frugal::vk {

struct ActivationTensor {
  std::string name;
  Dims dims;                   // at the declared batch
  int64_t sample_elems = 0;    // elements of one sample (batched) or of the whole tensor
  int producer = -1;           // layer index; -1: a network input
  std::vector<int> consumers;  // distinct layers reading it, ascending
  bool is_input = false, is_output = false;
};

struct Layer {
  std::string name;                 // the head node's name (made unique)
  std::vector<std::string> ops;     // head op first, then the bundled ops
  std::vector<std::string> nodes;   // node names, same order
  std::vector<int> inputs;          // distinct activation tensors read, in first-use order
  std::vector<int> node_inputs;     // per head-node input: activation tensor or -1 (constant / omitted)
  int output = -1;                  // activation tensor written
  std::unique_ptr<Kernel> kernel;
  int64_t macs_per_sample = 0;
};

class Model {
 public:
  // Compiles `g`. Throws sdk::Failure(FRUGAL_ERR_UNSUPPORTED) listing every node
  // this executor cannot run, frugal::Error for a malformed model.
  explicit Model(const Graph& g);

  bool batched() const { return batched_; }
  const std::string& not_batched_reason() const { return not_batched_reason_; }
  int64_t declared_batch() const { return declared_batch_; }

  const std::vector<ActivationTensor>& tensors() const { return tensors_; }
  const std::vector<Layer>& layers() const { return layers_; }
  std::vector<Layer>& layers() { return layers_; }
  const std::vector<int>& inputs() const { return inputs_; }
  const std::vector<int>& outputs() const { return outputs_; }
  int layer_index(const std::string& name) const;  // -1 if none

  // Dims of tensor t for n samples (batched: dim 0 = n; else n must be 1).
  Dims dims_at(int t, int64_t n) const;
  uint64_t sample_bytes(int t) const { return uint64_t(tensors_[size_t(t)].sample_elems) * sizeof(float); }
  uint64_t bytes(int t, int64_t n) const { return sample_bytes(t) * uint64_t(n); }
  // in / out / ws bytes of layer l at n samples (the cpu executor's definitions:
  // in = every distinct activation read, out = the output, ws = the kernel's workspace).
  frugal_layer_bytes layer_bytes(int l, int64_t n) const;

 private:
  std::vector<ActivationTensor> tensors_;
  std::vector<Layer> layers_;
  std::vector<int> inputs_, outputs_;
  bool batched_ = true;
  std::string not_batched_reason_;
  int64_t declared_batch_ = 1;
};

}  // namespace frugal::vk
