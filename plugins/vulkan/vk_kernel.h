// The kernel interface of the Vulkan executor: one object per schedulable
// layer's head node, built at compile time from the node and the shapes of its
// inputs. Its parameters (weights, bias, epilogue tables, index lists, indirect
// dispatch arguments) go into the executor's weights buffer; its pipelines are
// specialised for its shapes; at run time it records its dispatches over
// regions of the activation arena (one buffer of exactly the budget).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/epilogue_steps.h"
#include "common/kernel_registry.h"
#include "common/kernel_spec.h"
#include "frugal/model/graph.h"
#include "vk_device.h"
#include "vk_recorder.h"

namespace frugal::vk {

// The spec a factory builds from, and its helpers, are shared with the cpu
// executor (plugins/common/kernel_spec.h).
using exec::Dims;
using exec::InputInfo;
using exec::KernelSpec;

// Which ungated 3x3 stride-1 convs run as Winograd (option "winograd"): auto
// (where it measured faster, kernels/conv.cpp), off, or every one as F(2x2, 3x3)
// or F(4x4, 3x3) (tests).
enum class WinogradMode { Auto, Off, F23, F43 };

// How the kernels of one-group convs (conv.comp: direct and Winograd-transformed)
// and a Gemm/MatMul's constant B (matmul.comp) are stored in the weights buffer
// (option "weight_storage"): float32, or IEEE halves packed two per word (half
// the bytes, read with unpackHalf2x16; docs/VULKAN.md "fp16 weights"). Other
// parameters and every activation stay float32.
enum class WeightStorage { F32, F16 };

// Host copy of the weights buffer while kernels reserve their parameters; each
// kernel's block starts at a multiple of the binding alignment (and of 16
// bytes: conv.comp reads a Winograd conv's kernels as vec4), so it binds
// with no slack. Offsets are in 4-byte words from the start of the block.
class WeightPacker {
 public:
  // Device facts kernels decide their layout by: binding alignment, 1-D work
  // group size, largest binding, limits of 2-D tiled work groups; and the
  // executor's choice of Winograd convs, of the convs' weight storage and of
  // texel operands for convs (conv_texel.comp, dwconv_texel.spv).
  WeightPacker(uint64_t alignment_bytes, uint32_t workgroup_1d, uint64_t max_binding_bytes,
               TileLimits tiles = {}, WinogradMode winograd = WinogradMode::Auto,
               WeightStorage storage = WeightStorage::F32, bool texel = false)
      : workgroup_1d(workgroup_1d),
        max_binding_bytes(max_binding_bytes),
        tiles(tiles),
        winograd(winograd),
        storage(storage),
        texel(texel),
        align_words_(alignment_bytes < 16 ? 4 : alignment_bytes / 4) {}
  const uint32_t workgroup_1d;
  const uint64_t max_binding_bytes;
  const TileLimits tiles;
  const WinogradMode winograd;
  const WeightStorage storage;
  const bool texel;
  void begin_block();
  uint32_t add_floats(const std::vector<float>& v);
  uint32_t add_words(const std::vector<uint32_t>& v);
  // v as halves, two per word (vk_half.h), (v.size() + 1) / 2 words; throws
  // naming `owner` when a value is beyond fp16's range.
  uint32_t add_halves(const std::vector<float>& v, const std::string& owner);
  // Byte offset and size of the current block in the buffer.
  uint64_t block_offset() const { return uint64_t(block_start_) * 4; }
  uint64_t block_bytes() const { return uint64_t(words_.size() - block_start_) * 4; }
  const std::vector<uint32_t>& words() const { return words_; }
  uint64_t alignment_bytes() const { return align_words_ * 4; }

 private:
  uint64_t align_words_;
  size_t block_start_ = 0;
  std::vector<uint32_t> words_;
};

// A per-channel epilogue (channels: axis 1 of the output): the steps both
// executors build (plugins/common/epilogue_steps.h: affine steps for bias and
// BatchNormalization, consecutive ones merged; Relu, Clip, Sigmoid), at most
// kMaxSteps of them, the number the shaders are specialised for.
class Epilogue : public exec::EpilogueSteps {
 public:
  static constexpr size_t kMaxSteps = 4;
  // Whether one more step of this kind fits (an affine step after an affine merges).
  bool has_room(bool affine) const;
  size_t count() const { return steps_.size(); }

  // Stores the affine tables in the current block of `p` (call once, at pack time).
  void pack(WeightPacker& p);
  // Sets the epilogue constants (ids 40..56 of common.glsl) for `channels` channels.
  void specialize(SpecConstants& s, uint32_t channels) const;

 private:
  std::vector<uint32_t> offsets_;  // per step: its scale table in the block (the shift table follows)
};

// One execution of a layer on n consecutive samples of a request (a plan step,
// or the part of one in which every input lies in one piece of the arena).
struct LayerIO {
  int64_t n = 1;      // samples (batched models); 1 otherwise
  int64_t first = 0;  // the step's first sample in the request (a plan may split the batch)
  bool batched = true;
  std::vector<Region> in;  // per head-node input: its region (empty for constants, omitted inputs)
  Region out;
  Region ws;
  Region weights;             // the kernel's parameter block
  Region stats;               // two uints: a gated conv adds its switched-on kernels, a consumer its
                              // (kernel, input channel) pairs run (empty: not counted)
  double gate_activity = -1;  // >= 0: a gated conv's kernels on at this activity (time_layer)
};

// Where the SPIR-V files are, and which conv variant layers use.
struct ShaderSet {
  std::string dir;
  bool dense_conv = false;  // conv_dense.spv (plain dispatch) for ungated convs, instead of the indirect path
  std::string path(const std::string& name) const { return dir + "/" + name + ".spv"; }
};

// Invocations per work group of the gating shaders that give a plane, a
// (sample, kernel) or a sample's flags one group each (gate_pool, gate_switch,
// gate_inputs, gate_indices: a power of two, the least maximum Vulkan grants).
constexpr uint32_t kGateGroup = 128;

// Per-sample gates of a gated convolution: the gate values of n samples x M
// kernels in a device buffer; kernels whose value is above `threshold` are
// computed, the others are written as 0. The active-kernel lists and the
// indirect dispatch arguments are derived on the device (gate_indices.spv).
struct Gating {
  Region values;   // n * M floats
  Region indices;  // n * gate_list_length() uints, written on the device
  Region args;     // n * 3 uints, written on the device
  float threshold = 0.5f;
  int64_t n = 0;
};

class Kernel {
 public:
  virtual ~Kernel() = default;
  // Workspace bytes in the arena at a call whose input 0 has n samples (dim 0).
  virtual uint64_t workspace_bytes(int64_t n) const { return 0; }
  // True when the op combines values of different samples (a batch split would change it).
  virtual bool mixes_samples() const { return false; }
  // The epilogue that BN/activations after this node join (nullptr: none).
  virtual Epilogue* epilogue() { return nullptr; }
  // Reserves parameters in `p` (after bundling, so the epilogue is final).
  virtual void pack(WeightPacker& p) = 0;
  // Builds the pipelines (after pack).
  virtual void create_pipelines(Device& d, const ShaderSet& shaders) = 0;
  virtual void record(Recorder& r, const LayerIO& io) const = 0;
  // Gated convolution (Conv only): output kernels this kernel has, and the
  // length of one sample's active list (padded; the size of Gating::indices per sample).
  virtual int64_t gate_channels() const { return 0; }
  virtual int64_t gate_list_length() const { return 0; }
  // Uses `g` (kept by the caller) in later recordings; nullptr: ungated again.
  virtual void set_gating(const Gating* g) {}
  // A gate's consumer that skips the input channels that are all zero, and
  // its (output, input channel) pairs per sample when dense.
  virtual bool skips_off_channels() const { return false; }
  virtual int64_t skip_pairs() const { return 0; }
  // Slices its reduction is split into (split-K; 1: not split).
  virtual uint32_t reduction_split() const { return 1; }
  // Whether it reads its operands as texels (a conv on conv_texel.comp or dwconv_texel.spv).
  virtual bool texel_operands() const { return false; }

 protected:
  // Dim 0 of the head's input 0 at this call: io.n for batched models, else as declared.
  int64_t count(const LayerIO& io) const { return io.batched ? io.n : declared_dim0_; }
  int64_t declared_dim0_ = 1;
  // Samples per dispatch so that each per-sample operand (bytes per sample)
  // fits one binding; throws naming `label` when even one sample does not.
  // (all of count(io) for models that are not batched).
  int64_t samples_per_dispatch(const Recorder& r, const LayerIO& io,
                               const std::vector<uint64_t>& sample_bytes, const std::string& label) const;
};

// A kernel of one 1-D shader over count(io) "outer" units (samples) of
// `sample_elems` values each, split so that input and output fit a binding
// (pointwise, LRN, Softmax).
class FlatKernel : public Kernel {
 protected:
  void create_flat(Device& d, const ShaderSet& shaders, const char* shader, SpecConstants sc);
  // Records over samples: in/out regions advance by in_sample/out_sample bytes.
  void record_flat(Recorder& r, const LayerIO& io, uint64_t in_sample, uint64_t out_sample,
                   uint64_t invocations_per_sample, const std::string& label,
                   uint32_t rows_per_sample = 0) const;
  uint32_t wg_ = 64;
  VkPipeline pipeline_ = VK_NULL_HANDLE;
};

// The kernels of this executor, one registration per op in the kernel's own
// file: FRUGAL_VULKAN_KERNEL(Conv, ConvKernel); where ConvKernel has a
// constructor from a KernelSpec. It throws sdk::Failure(FRUGAL_ERR_UNSUPPORTED)
// for features this executor lacks and frugal::Error for malformed nodes, both
// naming the node.
exec::KernelRegistry<Kernel>& kernels();
#define FRUGAL_VULKAN_KERNEL(OP, KERNEL)                                      \
  [[maybe_unused]] static const bool frugal_vulkan_kernel_##OP##_registered = \
      ::frugal::vk::kernels().add(#OP, &::frugal::exec::make_kernel_of<::frugal::vk::Kernel, KERNEL>)
// One kernel for every activation the model library defines (ops::Activation).
#define FRUGAL_VULKAN_ACTIVATIONS(KERNEL)                                         \
  [[maybe_unused]] static const bool frugal_vulkan_activation_kernel_registered = \
      ::frugal::vk::kernels().add_activations(&::frugal::exec::make_kernel_of<::frugal::vk::Kernel, KERNEL>)
using exec::append_to_epilogue;

// ---- helpers for the factories (plugins/common/kernel_spec.h) ------------------
using exec::constant_floats;
using exec::constant_ints;
using exec::dims_string;
using exec::fail;
using exec::has_input;
using exec::normalize_axis;
using exec::product;
using exec::required_input;
using exec::unsupported;
// Input i must be a float32 activation computed at run time (not a constant).
void require_activation(const KernelSpec& s, size_t i, const char* role);
// Dims of a tensor declared `d` at this call (dim 0 = io.n when batched).
Dims at_call(const Dims& d, const LayerIO& io);
uint32_t u32(int64_t v, const KernelSpec& s, const char* what);  // checked narrowing for shader constants

}  // namespace frugal::vk
