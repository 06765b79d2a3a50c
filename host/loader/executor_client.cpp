#include "loader/executor_client.h"

#include <cmath>
#include <cstdint>
#include <unordered_map>
#include <utility>

#include "frugal/model/onnx_export.h"
#include "loader/plugin_call.h"
#include "loader/search_paths.h"

namespace frugal {

namespace {

// The names listed under describe()[key], checked.
std::vector<std::string> names_in(const LoadedPlugin& p, const nlohmann::json& d, const char* key) {
  if (!d.contains(key) || !d[key].is_array())
    throw Error(plugin_label(p) + ": describe() has no \"" + key + "\" list");
  std::vector<std::string> names;
  for (const auto& t : d[key]) {
    if (!t.is_object() || !t.contains("name") || !t["name"].is_string())
      throw Error(plugin_label(p) + ": describe() lists an entry of \"" + key + "\" without a name");
    names.push_back(t["name"].get<std::string>());
  }
  return names;
}

// Views of host tensors for the C ABI; `dims` and `views` must outlive the call.
void make_views(const std::vector<std::string>& names, const std::vector<TensorRef>& tensors,
                const char* role, std::vector<frugal_tensor>& views) {
  if (names.size() != tensors.size())
    throw Error(std::string("executor run: ") + std::to_string(tensors.size()) + " " + role +
                " tensors but " + std::to_string(names.size()) + " names");
  views.clear();
  for (size_t i = 0; i < tensors.size(); ++i) {
    const TensorRef& t = tensors[i];
    if (t.dims->empty() || checked_element_count(*t.dims) != static_cast<int64_t>(t.count))
      throw Error(std::string("executor run: ") + role + " '" + names[i] + "' has shape " +
                  shape_string(*t.dims) + " but " + std::to_string(t.count) + " values");
    frugal_tensor v;
    v.name = names[i].c_str();
    v.dtype = FRUGAL_DTYPE_FLOAT32;
    v.rank = static_cast<int32_t>(t.dims->size());
    v.dims = t.dims->data();
    // Inputs are declared read-only by the ABI's ownership rules; the C struct
    // has one pointer type for both directions.
    v.data = const_cast<float*>(t.data);
    v.bytes = t.count * sizeof(float);
    views.push_back(v);
  }
}

std::vector<TensorRef> refs_of(const std::vector<Tensor>& tensors) {
  std::vector<TensorRef> refs;
  for (const Tensor& t : tensors) refs.push_back({&t.dims, t.data.data(), t.data.size()});
  return refs;
}

}  // namespace

nlohmann::json executor_options_with_host_paths(const nlohmann::json& options) {
  if (!options.is_null() && !options.is_object()) return options;
  nlohmann::json o = options.is_null() ? nlohmann::json::object() : options;
  if (!o.contains("shader_dir")) o["shader_dir"] = shader_dir();
  return o;
}

ExecutorClient::ExecutorClient(const LoadedPlugin& executor, const Graph& model,
                               const nlohmann::json& options)
    : plugin_(&executor) {
  require_kind(executor, FRUGAL_KIND_EXECUTOR);
  // Weights by address where the plugin reads them so: not held once more as bytes.
  const bool by_address =
      executor.extension(FRUGAL_EXT_HOST_WEIGHTS, FRUGAL_HOST_WEIGHTS_EXT_BASE_SIZE) != nullptr;
  create(save_onnx_bytes(model, by_address ? WeightsAs::HostAddresses : WeightsAs::Bytes), options);
}

ExecutorClient::ExecutorClient(const LoadedPlugin& executor, Graph&& model, const nlohmann::json& options)
    : plugin_(&executor) {
  Graph given = std::move(model);
  model = Graph();
  require_kind(executor, FRUGAL_KIND_EXECUTOR);
  const auto* ext = static_cast<const frugal_host_weights_extension*>(
      executor.extension(FRUGAL_EXT_HOST_WEIGHTS, sizeof(frugal_host_weights_extension)));
  if (ext && ext->create_releasing) {
    create_releasing(*ext, given, options);
  } else {
    const bool by_address =
        ext || executor.extension(FRUGAL_EXT_HOST_WEIGHTS, FRUGAL_HOST_WEIGHTS_EXT_BASE_SIZE);
    create(save_onnx_bytes(given, by_address ? WeightsAs::HostAddresses : WeightsAs::Bytes), options);
  }
}

ExecutorClient::ExecutorClient(const LoadedPlugin& executor, const std::string& onnx_bytes,
                               const nlohmann::json& options)
    : plugin_(&executor) {
  require_kind(executor, FRUGAL_KIND_EXECUTOR);
  create(onnx_bytes, options);
}

ExecutorClient::~ExecutorClient() { release(); }

ExecutorClient::ExecutorClient(ExecutorClient&& other) noexcept
    : plugin_(other.plugin_),
      handle_(std::exchange(other.handle_, nullptr)),
      description_(std::move(other.description_)) {}

ExecutorClient& ExecutorClient::operator=(ExecutorClient&& other) noexcept {
  if (this != &other) {
    release();
    plugin_ = other.plugin_;
    handle_ = std::exchange(other.handle_, nullptr);
    description_ = std::move(other.description_);
  }
  return *this;
}

void ExecutorClient::release() noexcept {
  if (handle_) api().destroy(handle_);
  handle_ = nullptr;
}

const frugal_executor_api& ExecutorClient::api() const {
  return *static_cast<const frugal_executor_api*>(plugin_->api);
}

void ExecutorClient::create(const std::string& onnx_bytes, const nlohmann::json& options) {
  const std::string opts = executor_options_with_host_paths(options).dump();
  frugal_error err = fresh_error();
  frugal_executor* h = nullptr;
  const int status = api().create(onnx_bytes.data(), onnx_bytes.size(), opts.c_str(), &h, &err);
  adopt(status, h, err);
}

namespace {

// The weights a plugin may still read during create_releasing, by address;
// done() frees each one's bytes in the host's graph as the plugin reports it.
struct LentWeights {
  std::unordered_map<uint64_t, std::vector<uint8_t>*> by_address;

  static void done(void* host, uint64_t address) {
    auto& lent = static_cast<LentWeights*>(host)->by_address;
    const auto it = lent.find(address);
    if (it == lent.end()) return;  // not lent, or reported before: nothing to free
    std::vector<uint8_t>().swap(*it->second);
    lent.erase(it);
  }
};

}  // namespace

void ExecutorClient::create_releasing(const frugal_host_weights_extension& ext, Graph& model,
                                      const nlohmann::json& options) {
  const std::string opts = executor_options_with_host_paths(options).dump();
  const std::string onnx = save_onnx_bytes(model, WeightsAs::HostAddresses);
  LentWeights lent;
  for (auto& [name, t] : model.tensors)
    if (t.is_initializer && !t.data.empty())
      lent.by_address.emplace(reinterpret_cast<uintptr_t>(t.data.data()), &t.data);
  frugal_error err = fresh_error();
  frugal_executor* h = nullptr;
  const int status =
      ext.create_releasing(onnx.data(), onnx.size(), opts.c_str(), &LentWeights::done, &lent, &h, &err);
  adopt(status, h, err);
}

void ExecutorClient::adopt(int status, frugal_executor* h, const frugal_error& err) {
  if (status != FRUGAL_OK && h) api().destroy(h);  // a failed create must not leak a half-built one
  check_status(*plugin_, status, err, "create");
  if (!h) throw Error(plugin_label(*plugin_) + ": create returned OK but no executor");
  handle_ = h;
}

frugal_executor* ExecutorClient::handle() const {
  if (!handle_) throw Error(plugin_label(*plugin_) + ": executor used after being moved from");
  return handle_;
}

const nlohmann::json& ExecutorClient::describe() const {
  if (!description_.is_null()) return description_;
  BlobHolder out;
  frugal_error err = fresh_error();
  check_status(*plugin_, api().describe(handle(), out.out(), &err), err, "describe");
  nlohmann::json d = blob_json(*plugin_, out, "description", false);
  if (!d.is_object())
    throw Error(plugin_label(*plugin_) + ": describe() returned a JSON " + std::string(d.type_name()) +
                ", not an object");
  description_ = std::move(d);
  return description_;
}

std::vector<std::string> ExecutorClient::input_names() const {
  return names_in(*plugin_, describe(), "inputs");
}
std::vector<std::string> ExecutorClient::output_names() const {
  return names_in(*plugin_, describe(), "outputs");
}

std::vector<std::vector<int64_t>> ExecutorClient::output_shapes(int64_t batch) const {
  const nlohmann::json& d = describe();
  const auto names = names_in(*plugin_, d, "outputs");
  std::vector<std::vector<int64_t>> shapes;
  for (size_t i = 0; i < names.size(); ++i) {
    const auto& s = d["outputs"][i].value("shape", nlohmann::json());
    if (!s.is_array() || s.empty())
      throw Error(plugin_label(*plugin_) + ": describe() gives output '" + names[i] + "' no shape");
    std::vector<int64_t> dims;
    for (size_t k = 0; k < s.size(); ++k) {
      if (k == 0) {
        dims.push_back(batch);  // the batch dimension, whatever the model was created with
      } else if (s[k].is_number_integer() && s[k].get<int64_t>() >= 0) {
        dims.push_back(s[k].get<int64_t>());
      } else {
        throw Error(plugin_label(*plugin_) + ": describe() gives output '" + names[i] + "' dimension " +
                    std::to_string(k) + " = " + s[k].dump() + ", not a size");
      }
    }
    shapes.push_back(std::move(dims));
  }
  return shapes;
}

LayerBytes ExecutorClient::layer_bytes(int layer, int batch) const {
  frugal_layer_bytes b{0, 0, 0};
  frugal_error err = fresh_error();
  check_status(*plugin_, api().layer_bytes(handle(), layer, batch, &b, &err), err,
               "layer_bytes(layer " + std::to_string(layer) + ", batch " + std::to_string(batch) + ")");
  return LayerBytes{b.in_bytes, b.out_bytes, b.ws_bytes};
}

void ExecutorClient::set_budget(uint64_t bytes) {
  frugal_error err = fresh_error();
  check_status(*plugin_, api().set_budget(handle(), bytes, &err), err,
               "set_budget(" + std::to_string(bytes) + " bytes)");
}

LayerTiming ExecutorClient::time_layer(int layer, int batch, int repeats) {
  double median = -1, spread = -1;
  frugal_error err = fresh_error();
  const std::string what =
      "time_layer(layer " + std::to_string(layer) + ", batch " + std::to_string(batch) + ")";
  check_status(*plugin_, api().time_layer(handle(), layer, batch, repeats, &median, &spread, &err), err,
               what);
  if (!std::isfinite(median) || median < 0 || !std::isfinite(spread) || spread < 0)
    throw Error(plugin_label(*plugin_) + ": " + what + " returned OK but median " + std::to_string(median) +
                " s, spread " + std::to_string(spread) + " s");
  return LayerTiming{median, spread};
}

bool ExecutorClient::can_place() const {
  return plugin_->extension(FRUGAL_EXT_PLACEMENT, sizeof(frugal_placement_extension)) != nullptr;
}

const frugal_placement_extension& ExecutorClient::placement() const {
  const void* ext = plugin_->extension(FRUGAL_EXT_PLACEMENT, sizeof(frugal_placement_extension));
  if (!ext)
    throw Error(plugin_label(*plugin_) + ": does not offer " FRUGAL_EXT_PLACEMENT
                                         " (placing a plan offline)");
  return *static_cast<const frugal_placement_extension*>(ext);
}

nlohmann::json ExecutorClient::place(const nlohmann::json& plan, int64_t batch, uint64_t capacity) const {
  const frugal_placement_extension& ext = placement();
  const bool whole_batch = plan.is_null() || (plan.is_object() && plan.empty());
  const std::string plan_text = whole_batch ? std::string() : plan.dump();
  if (batch < 1 || batch > INT32_MAX)
    throw Error("place: batch must be in 1..2^31-1, got " + std::to_string(batch));
  BlobHolder out;
  frugal_error err = fresh_error();
  check_status(*plugin_,
               ext.place(handle(), whole_batch ? nullptr : plan_text.c_str(), int32_t(batch), capacity,
                         out.out(), &err),
               err, "place");
  nlohmann::json j = blob_json(*plugin_, out, "placement", true, nlohmann::json::object());
  for (const char* key : {"peak_bytes", "moved_bytes", "compactions"})
    if (!j.contains(key) || !j[key].is_number_unsigned())
      throw Error(plugin_label(*plugin_) + ": place returned no non-negative integer \"" + key + "\"");
  return j;
}

double ExecutorClient::time_move(uint64_t capacity, int repeats) {
  const frugal_placement_extension& ext = placement();
  double median = -1;
  frugal_error err = fresh_error();
  const std::string what = "time_move(arena of " + std::to_string(capacity) + " bytes)";
  check_status(*plugin_, ext.time_move(handle(), capacity, repeats, &median, &err), err, what);
  if (!std::isfinite(median) || median < 0)
    throw Error(plugin_label(*plugin_) + ": " + what + " returned OK but " + std::to_string(median) + " s");
  return median;
}

void ExecutorClient::run_into(const nlohmann::json& plan, const std::vector<std::string>& input_names,
                              const std::vector<TensorRef>& inputs,
                              const std::vector<std::string>& output_names, std::vector<Tensor>& outputs,
                              BlobHolder& report) {
  std::vector<frugal_tensor> in_views, out_views;
  make_views(input_names, inputs, "input", in_views);
  make_views(output_names, refs_of(outputs), "output", out_views);
  const bool whole_batch = plan.is_null() || (plan.is_object() && plan.empty());
  const std::string plan_text = whole_batch ? std::string() : plan.dump();
  frugal_error err = fresh_error();
  const int status = api().run(handle(), whole_batch ? nullptr : plan_text.c_str(), in_views.data(),
                               in_views.size(), out_views.data(), out_views.size(), report.out(), &err);
  check_status(*plugin_, status, err, "run");
}

nlohmann::json ExecutorClient::run(const nlohmann::json& plan, const std::vector<std::string>& input_names,
                                   const std::vector<Tensor>& inputs,
                                   const std::vector<std::string>& output_names,
                                   std::vector<Tensor>& outputs) {
  BlobHolder report;
  run_into(plan, input_names, refs_of(inputs), output_names, outputs, report);
  return blob_json(*plugin_, report, "run report", true, nlohmann::json::object());
}

void ExecutorClient::allocate_outputs(const std::vector<int64_t>& input0_dims,
                                      std::vector<Tensor>& outputs) const {
  if (input0_dims.empty())
    throw Error(plugin_label(*plugin_) + ": run needs at least one input with a batch dimension");
  if (outputs.empty())
    for (auto& dims : output_shapes(input0_dims[0])) outputs.emplace_back(std::move(dims));
}

nlohmann::json ExecutorClient::run(const nlohmann::json& plan, const std::vector<Tensor>& inputs,
                                   std::vector<Tensor>& outputs) {
  allocate_outputs(inputs.empty() ? std::vector<int64_t>{} : inputs[0].dims, outputs);
  return run(plan, input_names(), inputs, output_names(), outputs);
}

std::string ExecutorClient::run_text(const nlohmann::json& plan, const std::vector<TensorRef>& inputs,
                                     std::vector<Tensor>& outputs) {
  allocate_outputs(inputs.empty() ? std::vector<int64_t>{} : *inputs[0].dims, outputs);
  BlobHolder report;
  run_into(plan, input_names(), inputs, output_names(), outputs, report);
  return blob_json_text(*plugin_, report, "run report");
}

}  // namespace frugal
