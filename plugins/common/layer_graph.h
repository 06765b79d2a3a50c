// The layer graph both executors compile a model into: activation tensors,
// schedulable layers (a head node, plus the BatchNormalization / activations /
// Dropout / Identity that run in place right after it), network inputs and
// outputs, batched detection and the in/out/ws byte accounting per layer.
// Every node's op comes from the model library's registry (frugal/model/ops.h),
// which gives the shapes at the declared batch and at the batch probe and the
// MAC counts. Kernels are the backend's: a backend derives from LayerGraph,
// keeps one kernel per layer (same index), answers the hooks below, and calls
// compile() from its constructor.
//
// Samples: when every activation keeps the batch on axis 0 and no op mixes
// samples, the model is "batched": a run may have any number B of samples and a
// plan may split them. Otherwise the whole request is a single sample (B = 1,
// inputs exactly as declared).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/epilogue_steps.h"
#include "common/gate_params.h"
#include "common/kernel_spec.h"
#include "frugal/model/gating.h"
#include "frugal/model/graph.h"
#include "frugal/plugin.h"

namespace frugal::exec {

struct NodeShapes;    // layer_graph.cpp: one node's op and output shapes
struct CompileState;  // layer_graph.cpp: what one compile() has seen so far

struct ActivationTensor {
  std::string name;
  Dims dims;                     // at the declared batch
  DType dtype = DType::Float32;  // Bool tensors are held as float 0 / 1
  int64_t sample_elems = 0;      // elements of one sample (batched) or of the whole tensor
  int producer = -1;             // layer index; -1: a network input
  std::vector<int> consumers;    // distinct layers reading it, ascending
  bool is_input = false, is_output = false;
};

struct Layer {
  std::string name;                 // the head node's name (made unique)
  std::vector<std::string> ops;     // head op first, then the bundled ops
  std::vector<std::string> nodes;   // node names, same order
  std::vector<int> inputs;          // distinct activation tensors read, in first-use order
  std::vector<int> node_inputs;     // per head-node input: activation tensor or -1 (constant / omitted)
  std::vector<Dims> constant_dims;  // per head-node input: dims of constants (others unused)
  int output = -1;                  // activation tensor written
  int64_t macs_per_sample = 0;
  // Kernel gates (docs/GATING.md), on backends that run them:
  int64_t gate_kernels = 0;          // > 0: a gated conv with this many switched kernels
  float gate_threshold = 0.0f;       // its threshold (the model's, or the executor's option)
  int64_t gate_macs_per_sample = 0;  // the gate's own MACs (1x1 on the pooled input), in macs_per_sample
  bool skips_off_channels = false;   // a gate's consumer: skips input channels that are all zero
  int64_t zero_block = 0;            // a gate's consumer: values per channel of input 0 (its skipped unit)
};

class LayerGraph {
 public:
  virtual ~LayerGraph() = default;
  LayerGraph(const LayerGraph&) = delete;
  LayerGraph& operator=(const LayerGraph&) = delete;

  const std::string& executor() const { return executor_; }
  bool batched() const { return batched_; }
  const std::string& not_batched_reason() const { return not_batched_reason_; }
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
  // in / out / ws bytes of layer l at n samples: in = every distinct activation
  // read, out = the output, ws = the kernel's arena workspace.
  frugal_layer_bytes layer_bytes(int l, int64_t n) const;
  // The input dims a kernel call of layer l on n samples gets (one per head-node input).
  std::vector<Dims> call_dims(int l, int64_t n) const;
  // "a, b" for tensor ids.
  std::string tensor_names(const std::vector<int>& ids) const;

 protected:
  explicit LayerGraph(std::string executor) : executor_(std::move(executor)) {}

  // Compiles `g` (shapes from its declared input shapes; a symbolic dim 0 is the
  // batch) through the hooks. Throws sdk::Failure(FRUGAL_ERR_UNSUPPORTED) listing
  // every part this executor cannot run, frugal::Error for a malformed model.
  void compile(const Graph& g);
  // The same from a graph the model consumes: each initializer's bytes are
  // freed as soon as the last node that reads it is compiled (its kernel holds
  // what it keeps), and the rest of `g` at the end, so that the kernels'
  // copies and the graph's never all exist at once.
  void compile(Graph&& g);

  // ---- the backend's hooks ----
  // True when the backend has a kernel for the op (its kernel registry).
  virtual bool op_supported(const std::string& op_type) const = 0;
  // Fills backend fields of a spec before a kernel is built from it.
  virtual void complete_spec(KernelSpec& s) const {}
  // Builds the kernel of a new layer (index layers().size()) from a spec whose
  // output dims the op's shape function gave.
  virtual void add_kernel(const KernelSpec& s) = 0;
  // True when layer l's op combines values of different samples (dim 0).
  virtual bool mixes_samples(int l, const std::vector<Dims>& in) const = 0;
  // The epilogue a BN or activation node `op` after layer l joins, or nullptr
  // when it cannot (then it heads a layer of its own).
  virtual EpilogueSteps* bundle_target(int l, const std::string& op) = 0;
  virtual uint64_t workspace_bytes(int l, int64_t n) const = 0;
  // True on backends with gated kernels: the model's gates (frugal/model/gating.h)
  // then compile into gated conv layers (gate and Mul included) and consumers
  // that skip off channels (layer_graph_gates.cpp). Others run gates densely.
  virtual bool runs_gates() const { return false; }
  // True on backends whose epilogues run Swish (EpilogueSteps::kSwish): then a
  // Sigmoid of a layer's output and the Mul of that output by it join the layer.
  virtual bool fuses_swish() const { return false; }
  // True on backends that fuse a residual Add into the layer computing one of
  // its operands (EpilogueSteps::kResidual; bundle_target(l, "Add") says which
  // layers can): the layer then reads the other operand as its last node input.
  virtual bool fuses_residual_add() const { return false; }
  // True on backends whose 1x1 convs to `out_channels` channels scale their
  // input per sample and channel as they read it: a squeeze-and-excite Mul
  // before such a conv then joins its layer (find_input_scales), which
  // join_input_scale(l) tells the conv's kernel (layer l); the layer reads
  // the scale as a node input after the conv's own.
  virtual bool fuses_input_scale(int64_t out_channels) const { return false; }
  virtual bool join_input_scale(int l) { return false; }
  // True when layer l, a Conv / Gemm consumer of a gate, skips the channels
  // that are off (else it runs densely on the zeros, Layer::skips_off_channels stays false).
  virtual bool consumer_skips_off_channels(int l) const { return true; }
  // Replaces the threshold of every gate when set (before compile()).
  std::optional<float> gate_threshold_;

 private:
  // Gates (layer_graph_gates.cpp).
  struct GateState {
    GateAnalysis analysis;
    std::set<std::string> absorbed;                             // gate nodes: computed inside the gated conv
    std::map<std::string, const GateMatch*> by_mul;             // the gate's Mul -> its match
    std::map<std::string, std::unique_ptr<GateParams>> params;  // gated conv node -> its gate
    std::set<std::string> consumers;                            // Conv / Gemm nodes that skip off channels
  };
  void find_model_gates(const Graph& g);
  bool compile_gate_node(const Node& n, CompileState& c);  // true: n is part of a gate, handled
  void attach_gate(const Node& n, KernelSpec& spec) const;
  // Values per channel of a consumer's input 0 named `input` (dims `in`).
  int64_t zero_block_of(const std::string& op, const std::string& input, const Dims& in) const;
  void mark_gate_layers();
  GateState gate_state_;

  void compile_graph(const Graph& g, Graph* consumed);
  // The steps of compile(), in order.
  void add_inputs(const Graph& g, CompileState& c);
  void infer_node_shapes(const Graph& g, CompileState& c) const;
  void compile_node(const Node& n, size_t index, CompileState& c);
  KernelSpec make_spec(const Node& n, const NodeShapes& shapes, std::vector<int>& node_inputs,
                       CompileState& c) const;
  bool try_bundle(const Node& n, const KernelSpec& spec, const std::vector<int>& node_inputs,
                  CompileState& c);
  void find_swish(const Graph& g, CompileState& c) const;
  bool try_bundle_swish(const Node& n, const std::vector<int>& node_inputs, CompileState& c);
  bool try_bundle_residual(const Node& n, const KernelSpec& spec, const std::vector<int>& node_inputs,
                           CompileState& c);
  void find_input_scales(const Graph& g, CompileState& c) const;
  bool absorb_input_scale(const Node& n, const KernelSpec& spec, const std::vector<int>& node_inputs,
                          CompileState& c);
  void join_input_scale_of(const Node& n, CompileState& c);
  void add_layer(const Node& n, const KernelSpec& spec, const std::vector<int>& node_inputs,
                 NodeShapes& shapes, CompileState& c);
  void note_batching(const Node& n, const NodeShapes& shapes, int layer, const ActivationTensor& out,
                     const std::vector<Dims>& in0);
  void add_outputs(const Graph& g, CompileState& c);
  void finish();
  int64_t layer_macs(int l) const;

  std::vector<std::unique_ptr<Op>> layer_ops_;         // per layer: its head node's op
  std::vector<std::vector<ValueShape>> layer_inputs_;  // per layer: its head's inputs at the declared batch
  std::string executor_;
  std::vector<ActivationTensor> tensors_;
  std::vector<Layer> layers_;
  std::vector<int> inputs_, outputs_;
  bool batched_ = true;
  std::string not_batched_reason_;
  int64_t declared_batch_ = 1;
};

}  // namespace frugal::exec
