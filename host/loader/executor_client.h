// One executor instance (a model prepared for running, with its arena) held on
// the host side. RAII: the plugin's create() in the constructor, destroy() in the
// destructor. Every call checks the status and what comes back, and failures are
// frugal::Errors naming the plugin.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "frugal/model/graph.h"
#include "frugal/plugin.h"
#include "loader/plugin_registry.h"
#include "tensor/tensor.h"

namespace frugal {

class BlobHolder;

// A caller's float32 values by reference, passed to the plugin without a copy:
// dims (dim 0 the batch) and `count` values at `data`, both owned by the caller.
struct TensorRef {
  const std::vector<int64_t>* dims = nullptr;
  const float* data = nullptr;
  size_t count = 0;
};

struct LayerBytes {
  uint64_t in_bytes = 0, out_bytes = 0, ws_bytes = 0;
};

struct LayerTiming {
  double median_seconds = 0, spread_seconds = 0;  // per batch
};

// `options` with the host's "shader_dir" (loader/search_paths.h: FRUGAL_SHADER_DIR, else an
// installed share/frugal/shaders next to bin/frugal, else the build's shaders/)
// added unless it is already there, so that an installed frugal's vulkan
// executor finds its SPIR-V wherever the plugin itself was loaded from.
// Executors without shaders ignore the key (executors ignore option keys they
// do not use). Options that are not null or an object are returned unchanged,
// for the plugin to refuse.
nlohmann::json executor_options_with_host_paths(const nlohmann::json& options);

class ExecutorClient {
 public:
  // options: {"threads":T,"device":N,...} or null. The host adds what it knows
  // that the caller did not give (executor_options_with_host_paths).
  ExecutorClient(const LoadedPlugin& executor, const Graph& model, const nlohmann::json& options = nullptr);
  // The same with a model given away: where the plugin offers create_releasing
  // (plugin.h, FRUGAL_EXT_HOST_WEIGHTS) each weight of `model` is freed as soon
  // as the plugin has read it, so the weights are not held twice while the
  // executor is made; otherwise `model` is freed once create returns. `model`
  // is empty afterwards, also when create fails.
  ExecutorClient(const LoadedPlugin& executor, Graph&& model, const nlohmann::json& options = nullptr);
  ExecutorClient(const LoadedPlugin& executor, const std::string& onnx_bytes,
                 const nlohmann::json& options = nullptr);
  ~ExecutorClient();
  ExecutorClient(ExecutorClient&& other) noexcept;
  ExecutorClient& operator=(ExecutorClient&& other) noexcept;
  ExecutorClient(const ExecutorClient&) = delete;
  ExecutorClient& operator=(const ExecutorClient&) = delete;

  const LoadedPlugin& plugin() const { return *plugin_; }

  // {"device","layers":[...],"inputs":[{"name","shape"}],"outputs":[...]}. Asked
  // of the plugin once (an object is required), then kept: it describes the model
  // the executor was created with, which does not change.
  const nlohmann::json& describe() const;
  std::vector<std::string> input_names() const;
  std::vector<std::string> output_names() const;
  // Output shapes from describe() with dimension 0 (the batch) set to `batch`.
  std::vector<std::vector<int64_t>> output_shapes(int64_t batch) const;

  LayerBytes layer_bytes(int layer, int batch) const;
  void set_budget(uint64_t bytes);
  LayerTiming time_layer(int layer, int batch, int repeats);

  // The placement extension (plugin.h, FRUGAL_EXT_PLACEMENT): whether the
  // executor offers it; the moves `plan` (null: whole batch) makes for a request
  // of `batch` in `capacity` bytes (0: the plan's peak) without running it:
  // {"peak_bytes","moved_bytes","compactions"}; and the median seconds per byte
  // moved in an arena of `capacity` bytes. Both throw when it is not offered.
  bool can_place() const;
  nlohmann::json place(const nlohmann::json& plan, int64_t batch, uint64_t capacity) const;
  double time_move(uint64_t capacity, int repeats);

  // Runs the model. plan: a plan object, or null / empty object for a whole-batch
  // run. Every tensor's data must hold exactly its dims' element count; outputs
  // must be allocated with the right shapes. Returns the plugin's report
  // ({"peak_bytes","seconds","steps"}; {} when it sends none).
  nlohmann::json run(const nlohmann::json& plan, const std::vector<std::string>& input_names,
                     const std::vector<Tensor>& inputs, const std::vector<std::string>& output_names,
                     std::vector<Tensor>& outputs);
  // Same with the names from describe(), in its order. Empty `outputs` are
  // allocated from output_shapes(batch of inputs[0]).
  nlohmann::json run(const nlohmann::json& plan, const std::vector<Tensor>& inputs,
                     std::vector<Tensor>& outputs);
  // Same, the inputs by reference (the caller's values, not copied), the report
  // as the plugin's JSON text, unparsed ("" when it sends none), for a caller
  // that converts it itself (the Lua binding, straight into tables).
  std::string run_text(const nlohmann::json& plan, const std::vector<TensorRef>& inputs,
                       std::vector<Tensor>& outputs);

 private:
  void run_into(const nlohmann::json& plan, const std::vector<std::string>& input_names,
                const std::vector<TensorRef>& inputs, const std::vector<std::string>& output_names,
                std::vector<Tensor>& outputs, BlobHolder& report);
  void allocate_outputs(const std::vector<int64_t>& input0_dims, std::vector<Tensor>& outputs) const;
  void create(const std::string& onnx_bytes, const nlohmann::json& options);
  void create_releasing(const frugal_host_weights_extension& ext, Graph& model,
                        const nlohmann::json& options);
  void adopt(int status, frugal_executor* h, const frugal_error& err);
  void release() noexcept;
  const frugal_executor_api& api() const;
  const frugal_placement_extension& placement() const;  // throws when not offered
  frugal_executor* handle() const;                      // throws after a move

  const LoadedPlugin* plugin_ = nullptr;
  frugal_executor* handle_ = nullptr;
  mutable nlohmann::json description_;  // null until describe() is first called
};

}  // namespace frugal
