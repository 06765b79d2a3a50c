#include "vk_executor.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include <dlfcn.h>

#include <nlohmann/json.hpp>

#include "frugal/plugin_sdk.hpp"
#include "onnx/onnx_import.h"
#include "util/error.h"

#ifndef FRUGAL_BUILD_SHADER_DIR
#define FRUGAL_BUILD_SHADER_DIR "shaders"
#endif

namespace frugal::vk {

namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string join_names(const Model& m, const std::vector<int>& ids) {
  std::string s;
  for (size_t i = 0; i < ids.size(); ++i) s += (i ? ", " : "") + m.tensors()[size_t(ids[i])].name;
  return s;
}

// An installed plugin (<prefix>/lib/frugal/plugins/vulkan.so) finds the shaders
// of its install (<prefix>/share/frugal/shaders); "" when that is not where it is.
std::string installed_shader_dir() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&installed_shader_dir), &info) || !info.dli_fname) return "";
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::path(info.dli_fname).parent_path() / ".." / ".." / ".." / "share" / "frugal" / "shaders";
  if (!std::filesystem::exists(dir / "conv_gated.spv", ec)) return "";
  return std::filesystem::weakly_canonical(dir, ec).string();
}

constexpr VkBufferUsageFlags kStorageUsage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
                                             VK_BUFFER_USAGE_TRANSFER_DST_BIT | VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT;

}  // namespace

std::string format_bytes(uint64_t bytes) {
  char buf[64];
  if (bytes >= 1000000) std::snprintf(buf, sizeof buf, "%.1f MB", double(bytes) / 1e6);
  else if (bytes >= 1000) std::snprintf(buf, sizeof buf, "%.1f kB", double(bytes) / 1e3);
  else return std::to_string(bytes) + " bytes";
  return std::string(buf) + " (" + std::to_string(bytes) + " bytes)";
}

// ---- options -------------------------------------------------------------------

ExecutorOptions ExecutorOptions::parse(const char* json) {
  ExecutorOptions o;
  o.validation = validation_requested();
  if (json && *json) {
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(json);
    } catch (const nlohmann::json::exception& e) {
      throw Error(std::string("options: not valid JSON: ") + e.what());
    }
    if (!j.is_null() && !j.is_object()) throw Error("options: expected a JSON object such as {\"device\": 0}");
    if (j.is_object()) {
      if (j.contains("device")) {
        const auto& v = j["device"];
        if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 1000)
          throw Error("option 'device' must be a device index (0, 1, ...; see `frugal devices`), got " + v.dump());
        o.device = int(v.get<int64_t>());
      }
      if (j.contains("shader_dir")) {
        if (!j["shader_dir"].is_string()) throw Error("option 'shader_dir' must be a string, got " + j["shader_dir"].dump());
        o.shader_dir = j["shader_dir"].get<std::string>();
      }
      if (j.contains("conv")) {
        const auto& v = j["conv"];
        if (!v.is_string() || (v != "dense" && v != "indirect"))
          throw Error("option 'conv' must be \"indirect\" (gating-ready, the default) or \"dense\", got " + v.dump());
        o.dense_conv = v == "dense";
      }
      if (j.contains("pipeline_cache")) {
        const auto& v = j["pipeline_cache"];
        if (v.is_boolean()) o.pipeline_cache = v.get<bool>() ? "" : "off";
        else if (v.is_string() && !v.get<std::string>().empty()) o.pipeline_cache = v.get<std::string>();
        else throw Error("option 'pipeline_cache' must be true, false or a file name, got " + v.dump());
      }
      if (j.contains("max_binding_bytes")) {
        const auto& v = j["max_binding_bytes"];
        if (!v.is_number_integer() || v.get<int64_t>() < 256)
          throw Error("option 'max_binding_bytes' must be an integer >= 256, got " + v.dump());
        o.max_binding_bytes = v.get<uint64_t>();
      }
    }
  }
  if (o.shader_dir.empty()) {
    const char* env = std::getenv("FRUGAL_SHADER_DIR");
    o.shader_dir = env && *env ? env : installed_shader_dir();
    if (o.shader_dir.empty()) o.shader_dir = FRUGAL_BUILD_SHADER_DIR;
  }
  return o;
}

// ---- creation --------------------------------------------------------------------

struct Executor::Recording {
  VkCommandBuffer cb = VK_NULL_HANDLE;
  std::vector<VkDescriptorSet> sets;
  int64_t batch = -1;
  VkBuffer arena = VK_NULL_HANDLE;
  uint32_t queries = 0;
};

Executor::Executor(const void* onnx, size_t size, const ExecutorOptions& options)
    : options_(options), model_(load_onnx_bytes(onnx, size, "model")) {
  DeviceOptions dopt;
  dopt.device = options_.device;
  dopt.validation = options_.validation;
  dopt.pipeline_cache = options_.pipeline_cache;
  device_ = shared_device(dopt);
  validation_base_ = device_->instance().validation_errors();
  shaders_.dir = options_.shader_dir;
  shaders_.dense_conv = options_.dense_conv;
  if (options_.max_binding_bytes == 0 || options_.max_binding_bytes > device_->max_binding_bytes())
    options_.max_binding_bytes = device_->max_binding_bytes();

  // Weights: every layer's parameter block, uploaded once.
  WeightPacker packer(device_->binding_alignment(), device_->workgroup_1d(), options_.max_binding_bytes);
  std::vector<std::pair<uint64_t, uint64_t>> blocks;
  for (Layer& L : model_.layers()) {
    packer.begin_block();  // every layer's block starts aligned, even an empty one
    L.kernel->pack(packer);
    blocks.emplace_back(packer.block_offset(), packer.block_bytes());
  }
  const uint64_t weight_bytes = std::max<uint64_t>(packer.words().size() * 4, 16);
  weights_ = Buffer(*device_, weight_bytes, kStorageUsage, false, "weights buffer");
  if (!packer.words().empty()) device_->upload(weights_, 0, packer.words().data(), packer.words().size() * 4);
  for (const auto& b : blocks) weight_blocks_.push_back(Region{weights_.handle(), b.first, b.second});
  for (Layer& L : model_.layers()) L.kernel->create_pipelines(*device_, shaders_);
  device_->save_pipeline_cache();  // the next start finds the compiled pipelines

  VkCommandPoolCreateInfo pi{};
  pi.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pi.queueFamilyIndex = uint32_t(device_->info().compute_queue_family);
  check(device_->fn().vkCreateCommandPool(device_->handle(), &pi, nullptr, &command_pool_), "vkCreateCommandPool");
  check_validation("create");
}

Executor::~Executor() {
  const DeviceFunctions& fn = device_->fn();
  fn.vkDeviceWaitIdle(device_->handle());
  if (recording_) device_->free_sets(recording_->sets);
  if (query_pool_) fn.vkDestroyQueryPool(device_->handle(), query_pool_, nullptr);
  if (command_pool_) fn.vkDestroyCommandPool(device_->handle(), command_pool_, nullptr);
}

uint64_t Executor::validation_errors() const { return device_->instance().validation_errors() - validation_base_; }

void Executor::check_validation(const std::string& what) const {
  const uint64_t n = validation_errors();
  if (n == 0) return;
  std::string msg = what + ": the Vulkan validation layer reported " + std::to_string(n) + " error" + (n == 1 ? "" : "s");
  const std::vector<std::string> first = device_->instance().validation_messages();
  if (!first.empty()) msg += "; first: " + first[0];
  throw sdk::Failure(FRUGAL_ERR_DEVICE, msg);
}

// ---- describe, layer_bytes, budget ---------------------------------------------------

std::string Executor::describe_json() const {
  using nlohmann::json;
  const Model& m = model_;
  json d;
  d["device"] = "vulkan: " + device_->description();
  d["batched"] = m.batched();
  if (!m.batched()) d["not_batched_reason"] = m.not_batched_reason();
  json layers = json::array();
  for (size_t l = 0; l < m.layers().size(); ++l) {
    const Layer& L = m.layers()[l];
    json in_layers = json::array(), in_tensors = json::array();
    for (int t : L.inputs) {
      const int p = m.tensors()[size_t(t)].producer;
      in_layers.push_back(p < 0 ? std::string() : m.layers()[size_t(p)].name);
      in_tensors.push_back(m.tensors()[size_t(t)].name);
    }
    const frugal_layer_bytes b = m.layer_bytes(int(l), 1);
    layers.push_back({{"name", L.name},
                      {"ops", L.ops},
                      {"nodes", L.nodes},
                      {"inputs", in_layers},
                      {"input_tensors", in_tensors},
                      {"output_tensor", m.tensors()[size_t(L.output)].name},
                      {"output_shape", m.tensors()[size_t(L.output)].dims},
                      {"macs_per_sample", L.macs_per_sample},
                      {"in_bytes_per_sample", b.in_bytes},
                      {"out_bytes_per_sample", b.out_bytes},
                      {"ws_bytes", b.ws_bytes}});
  }
  d["layers"] = layers;
  for (const char* key : {"inputs", "outputs"}) {
    json list = json::array();
    for (int t : (std::string(key) == "inputs" ? m.inputs() : m.outputs()))
      list.push_back({{"name", m.tensors()[size_t(t)].name}, {"shape", m.tensors()[size_t(t)].dims}});
    d[key] = list;
  }
  d["vulkan"] = {{"physical_device", device_->info().to_json()},
                 {"conv", options_.dense_conv ? "dense" : "indirect"},
                 {"shader_dir", shaders_.dir},
                 {"pipeline_cache", device_->pipeline_cache_path()},
                 {"pipeline_cache_loaded", device_->pipeline_cache_loaded()},
                 {"pipelines_built", device_->pipelines_built()},
                 {"workgroup_1d", device_->workgroup_1d()},
                 {"matmul_tile", device_->matmul_tile()},
                 {"max_binding_bytes", options_.max_binding_bytes},
                 {"weights_bytes", weights_.size()},
                 {"validation", options_.validation},
                 {"validation_errors", validation_errors()}};
  return d.dump();
}

frugal_layer_bytes Executor::layer_bytes(int layer, int batch) const {
  if (layer < 0 || size_t(layer) >= model_.layers().size())
    throw Error("layer_bytes: layer index " + std::to_string(layer) + " is out of range (the model has " +
                std::to_string(model_.layers().size()) + " layers)");
  if (batch < 1) throw Error("layer_bytes: batch must be >= 1, got " + std::to_string(batch));
  return model_.layer_bytes(layer, batch);
}

void Executor::set_budget(uint64_t bytes) {
  device_->fn().vkDeviceWaitIdle(device_->handle());
  if (recording_) {  // it points into the old arena
    device_->free_sets(recording_->sets);
    recording_->batch = -1;
    recording_->arena = VK_NULL_HANDLE;
  }
  budget_set_ = false;
  arena_ = Buffer();
  if (bytes > 0) arena_ = Buffer(*device_, bytes, kStorageUsage, false, "arena of " + format_bytes(bytes));
  budget_ = bytes;
  budget_set_ = true;
}

// ---- run ---------------------------------------------------------------------------------

int64_t Executor::check_inputs(const frugal_tensor* inputs, size_t n, std::vector<const frugal_tensor*>& ordered) const {
  const Model& m = model_;
  if (n != m.inputs().size())
    throw Error("run: the model has " + std::to_string(m.inputs().size()) + " input(s) (" + join_names(m, m.inputs()) +
                "), got " + std::to_string(n));
  if (n > 0 && !inputs) throw Error("run: inputs is NULL");
  ordered.assign(n, nullptr);
  for (size_t i = 0; i < n; ++i) {
    size_t k = i;
    if (inputs[i].name) {
      auto it = std::find_if(m.inputs().begin(), m.inputs().end(),
                             [&](int t) { return m.tensors()[size_t(t)].name == inputs[i].name; });
      if (it == m.inputs().end())
        throw Error(std::string("run: no input named '") + inputs[i].name + "' (inputs: " + join_names(m, m.inputs()) + ")");
      k = size_t(it - m.inputs().begin());
    }
    if (ordered[k]) throw Error("run: input '" + m.tensors()[size_t(m.inputs()[k])].name + "' given twice");
    ordered[k] = &inputs[i];
  }
  int64_t batch = -1;
  for (size_t k = 0; k < n; ++k) {
    const frugal_tensor& t = *ordered[k];
    const ActivationTensor& a = m.tensors()[size_t(m.inputs()[k])];
    const std::string who = "run: input '" + a.name + "'";
    if (t.dtype != FRUGAL_DTYPE_FLOAT32) throw Error(who + " has dtype " + dtype_name(DType(t.dtype)) + ", expected float32");
    if (t.rank < 0 || (t.rank > 0 && !t.dims)) throw Error(who + " has no dims");
    const Dims dims(t.dims, t.dims + t.rank);
    const int64_t b = m.batched() && !dims.empty() ? dims[0] : 1;
    Dims expect = a.dims;
    if (m.batched()) expect[0] = b;
    if (dims != expect || b < 1) {
      std::string want = dims_string(a.dims);
      if (m.batched()) {
        const std::string rest = dims_string(Dims(a.dims.begin() + 1, a.dims.end()));
        want = "[B" + (a.dims.size() > 1 ? ", " + rest.substr(1) : "]") + " with B >= 1";
      }
      throw Error(who + " has shape " + dims_string(dims) + ", expected " + want);
    }
    if (batch >= 0 && b != batch) throw Error(who + " has " + std::to_string(b) + " samples, the other inputs " + std::to_string(batch));
    batch = b;
    const uint64_t want = m.bytes(m.inputs()[k], b);
    if (t.bytes != want) throw Error(who + " has " + std::to_string(t.bytes) + " bytes, its shape needs " + std::to_string(want));
    if (want > 0 && !t.data) throw Error(who + " has no data");
  }
  return batch < 0 ? 1 : batch;
}

void Executor::check_outputs(frugal_tensor* outputs, size_t n, int64_t batch, std::vector<frugal_tensor*>& ordered) const {
  const Model& m = model_;
  if (n != m.outputs().size())
    throw Error("run: the model has " + std::to_string(m.outputs().size()) + " output(s) (" + join_names(m, m.outputs()) +
                "), got " + std::to_string(n));
  if (n > 0 && !outputs) throw Error("run: outputs is NULL");
  ordered.assign(n, nullptr);
  for (size_t i = 0; i < n; ++i) {
    size_t k = i;
    if (outputs[i].name) {
      auto it = std::find_if(m.outputs().begin(), m.outputs().end(),
                             [&](int t) { return m.tensors()[size_t(t)].name == outputs[i].name; });
      if (it == m.outputs().end())
        throw Error(std::string("run: no output named '") + outputs[i].name + "' (outputs: " + join_names(m, m.outputs()) + ")");
      k = size_t(it - m.outputs().begin());
    }
    if (ordered[k]) throw Error("run: output '" + m.tensors()[size_t(m.outputs()[k])].name + "' given twice");
    ordered[k] = &outputs[i];
  }
  for (size_t k = 0; k < n; ++k) {
    const frugal_tensor& t = *ordered[k];
    const int id = m.outputs()[k];
    const std::string who = "run: output '" + m.tensors()[size_t(id)].name + "'";
    if (t.dtype != FRUGAL_DTYPE_FLOAT32) throw Error(who + " has dtype " + dtype_name(DType(t.dtype)) + ", expected float32");
    const Dims want = m.dims_at(id, batch);
    const Dims dims = t.rank > 0 && t.dims ? Dims(t.dims, t.dims + t.rank) : Dims{};
    if (dims != want) throw Error(who + " has shape " + dims_string(dims) + ", expected " + dims_string(want));
    if (t.bytes != m.bytes(id, batch))
      throw Error(who + " has " + std::to_string(t.bytes) + " bytes, its shape needs " + std::to_string(m.bytes(id, batch)));
    if (t.bytes > 0 && !t.data) throw Error(who + " has no data");
  }
}

// Phase 1 runs whole batches; a plan is accepted when it is exactly that.
void Executor::check_plan(const char* plan_json, int64_t batch) const {
  if (!plan_json || !*plan_json) return;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(plan_json);
  } catch (const nlohmann::json::exception& e) {
    throw Error(std::string("run: plan is not valid JSON: ") + e.what());
  }
  if (j.is_null() || (j.is_object() && j.empty())) return;
  if (!j.is_object() || !j.contains("steps") || !j["steps"].is_array()) throw Error("run: plan must be an object with \"steps\": [...]");
  const auto& steps = j["steps"];
  bool whole = steps.size() == model_.layers().size();
  for (size_t i = 0; whole && i < steps.size(); ++i) {
    const auto& s = steps[i];
    if (!s.is_object()) throw Error("run: plan step " + std::to_string(i) + " is not an object");
    const auto& layer = s.contains("layer") ? s["layer"] : nlohmann::json();
    const bool same_layer = (layer.is_number_integer() && layer.get<int64_t>() == int64_t(i)) ||
                            (layer.is_string() && layer.get<std::string>() == model_.layers()[i].name);
    whole = same_layer && s.value("first", int64_t(-1)) == 0 && s.value("count", int64_t(-1)) == batch;
  }
  if (!whole)
    throw sdk::Failure(FRUGAL_ERR_UNSUPPORTED, "run: the vulkan executor runs whole batches only (phase 1): every layer once, in order, "
                                               "on samples 0.." + std::to_string(batch - 1) + "; plans that split the batch come in phase 2");
}

LayerIO Executor::layer_io(int l, const Layout& layout, const Buffer& arena, int64_t batch) const {
  const Model& m = model_;
  const Layer& L = m.layers()[size_t(l)];
  LayerIO io;
  io.n = m.batched() ? batch : 1;
  io.batched = m.batched();
  for (int t : L.node_inputs)
    io.in.push_back(t < 0 ? Region{} : Region{arena.handle(), layout.tensor_offset[size_t(t)], m.bytes(t, batch)});
  io.out = Region{arena.handle(), layout.tensor_offset[size_t(L.output)], m.bytes(L.output, batch)};
  const uint64_t ws = m.layer_bytes(l, batch).ws_bytes;
  if (ws) io.ws = Region{arena.handle(), layout.ws_offset[size_t(l)], ws};
  io.weights = weight_blocks_[size_t(l)];
  return io;
}

VkQueryPool Executor::query_pool(uint32_t queries) {
  if (!device_->has_timestamps() || queries == 0) return VK_NULL_HANDLE;
  if (query_pool_ && query_capacity_ >= queries) return query_pool_;
  device_->fn().vkDeviceWaitIdle(device_->handle());
  if (query_pool_) device_->fn().vkDestroyQueryPool(device_->handle(), query_pool_, nullptr);
  query_pool_ = VK_NULL_HANDLE;
  VkQueryPoolCreateInfo qi{};
  qi.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
  qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
  qi.queryCount = queries;
  check(device_->fn().vkCreateQueryPool(device_->handle(), &qi, nullptr, &query_pool_), "vkCreateQueryPool");
  query_capacity_ = queries;
  return query_pool_;
}

std::vector<double> Executor::read_timestamps(uint32_t queries) const {
  std::vector<double> seconds;
  if (!query_pool_ || queries == 0) return seconds;
  std::vector<uint64_t> ticks(queries);
  check(device_->fn().vkGetQueryPoolResults(device_->handle(), query_pool_, 0, queries, queries * sizeof(uint64_t), ticks.data(),
                                            sizeof(uint64_t), VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
        "vkGetQueryPoolResults");
  const uint32_t bits = device_->info().timestamp_valid_bits;
  const uint64_t mask = bits >= 64 ? ~uint64_t(0) : ((uint64_t(1) << bits) - 1);
  for (uint32_t q = 0; q + 1 < queries; q += 2) {
    const uint64_t d = (ticks[q + 1] - ticks[q]) & mask;
    seconds.push_back(double(d) * device_->timestamp_period_ns() * 1e-9);
  }
  return seconds;
}

void Executor::record_run(Recording& rec, const Layout& layout, const Buffer& arena, int64_t batch) {
  const DeviceFunctions& fn = device_->fn();
  const uint32_t queries = uint32_t(2 * model_.layers().size());
  VkQueryPool pool = query_pool(queries);
  if (!rec.cb) {
    VkCommandBufferAllocateInfo ai{};
    ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
    ai.commandPool = command_pool_;
    ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
    ai.commandBufferCount = 1;
    check(fn.vkAllocateCommandBuffers(device_->handle(), &ai, &rec.cb), "vkAllocateCommandBuffers");
  }
  device_->free_sets(rec.sets);
  check(fn.vkResetCommandBuffer(rec.cb, 0), "vkResetCommandBuffer");
  VkCommandBufferBeginInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  check(fn.vkBeginCommandBuffer(rec.cb, &bi), "vkBeginCommandBuffer");
  Recorder r(*device_, rec.cb, rec.sets, options_.max_binding_bytes);
  if (pool) fn.vkCmdResetQueryPool(rec.cb, pool, 0, queries);
  r.barrier();  // the inputs' upload
  for (size_t l = 0; l < model_.layers().size(); ++l) {
    if (pool) r.timestamp(pool, uint32_t(2 * l), VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT);
    model_.layers()[l].kernel->record(r, layer_io(int(l), layout, arena, batch));
    if (pool) r.timestamp(pool, uint32_t(2 * l + 1), VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT);
    r.barrier();
  }
  check(fn.vkEndCommandBuffer(rec.cb), "vkEndCommandBuffer");
  rec.batch = batch;
  rec.arena = arena.handle();
  rec.queries = pool ? queries : 0;
}

std::string Executor::run(const char* plan_json, const frugal_tensor* inputs, size_t n_inputs, frugal_tensor* outputs,
                          size_t n_outputs) {
  const Model& m = model_;
  std::vector<const frugal_tensor*> ins;
  std::vector<frugal_tensor*> outs;
  const int64_t batch = check_inputs(inputs, n_inputs, ins);
  check_outputs(outputs, n_outputs, batch, outs);
  check_plan(plan_json, batch);
  for (const auto& kv : gates_)
    if (kv.second->gating.n != batch)
      throw Error("run: gates of layer '" + m.layers()[size_t(kv.first)].name + "' were set for " + std::to_string(kv.second->gating.n) +
                  " samples, the request has " + std::to_string(batch));

  const Layout layout = plan_layout(m, batch);
  const bool auto_budget = !budget_set_;
  Buffer temporary;
  const Buffer* arena = &arena_;
  if (auto_budget) {
    if (layout.extent > 0) temporary = Buffer(*device_, layout.extent, kStorageUsage, false, "arena of " + format_bytes(layout.extent));
    arena = &temporary;
  } else if (layout.extent > budget_) {
    std::string msg = "run: a whole batch of " + std::to_string(batch) + " needs " + format_bytes(layout.extent) + " of activations";
    if (layout.extent > layout.peak_live) msg += " (" + format_bytes(layout.peak_live) + " live at once, plus fragmentation)";
    if (layout.peak_step >= 0) msg += ", most at layer '" + m.layers()[size_t(layout.peak_step)].name + "'";
    msg += "; budget is " + format_bytes(budget_);
    throw sdk::Failure(FRUGAL_ERR_BUDGET, msg);
  }

  const double t0 = now_seconds();
  if (!recording_) recording_ = std::make_unique<Recording>();
  if (recording_->batch != batch || recording_->arena != arena->handle() || auto_budget)
    record_run(*recording_, layout, *arena, batch);
  for (size_t k = 0; k < ins.size(); ++k) {
    const int t = m.inputs()[k];
    if (ins[k]->bytes) device_->upload(*arena, layout.tensor_offset[size_t(t)], ins[k]->data, ins[k]->bytes);
  }
  device_->submit_and_wait(recording_->cb);
  check_validation("run");
  for (size_t k = 0; k < outs.size(); ++k) {
    const int t = m.outputs()[k];
    if (outs[k]->bytes) device_->download(*arena, layout.tensor_offset[size_t(t)], outs[k]->data, outs[k]->bytes);
  }
  const double seconds = now_seconds() - t0;
  const std::vector<double> gpu = read_timestamps(recording_->queries);
  if (auto_budget) {  // the temporary arena goes; so does the recording that points into it
    device_->free_sets(recording_->sets);
    recording_->batch = -1;
    recording_->arena = VK_NULL_HANDLE;
  }

  nlohmann::json steps = nlohmann::json::array();
  double gpu_total = 0;
  for (size_t l = 0; l < m.layers().size(); ++l) {
    nlohmann::json s = {{"layer", m.layers()[l].name}, {"first", 0}, {"count", batch}};
    if (l < gpu.size()) {
      s["seconds"] = gpu[l];
      gpu_total += gpu[l];
    }
    steps.push_back(s);
  }
  nlohmann::json report = {{"peak_bytes", layout.peak_live},
                           {"layout_bytes", layout.extent},
                           {"budget_bytes", auto_budget ? layout.extent : budget_},
                           {"auto_budget", auto_budget},
                           {"batch", batch},
                           {"seconds", seconds},
                           {"validation_errors", validation_errors()},
                           {"steps", steps}};
  if (!gpu.empty()) report["gpu_seconds"] = gpu_total;
  return report.dump();
}

// ---- time_layer ----------------------------------------------------------------------------

void Executor::time_layer(int layer, int batch, int repeats, double& median, double& spread) {
  const Model& m = model_;
  if (layer < 0 || size_t(layer) >= m.layers().size())
    throw Error("time_layer: layer index " + std::to_string(layer) + " is out of range (the model has " +
                std::to_string(m.layers().size()) + " layers)");
  if (batch < 1) throw Error("time_layer: batch must be >= 1, got " + std::to_string(batch));
  if (!m.batched() && batch != 1)
    throw Error("time_layer: the model is not batched (" + m.not_batched_reason() + "), only batch 1 can be timed");
  if (repeats < 1) throw Error("time_layer: repeats must be >= 1, got " + std::to_string(repeats));
  if (gates_.count(layer)) throw Error("time_layer: layer '" + m.layers()[size_t(layer)].name + "' is gated; clear its gates first");
  const Layer& L = m.layers()[size_t(layer)];
  const frugal_layer_bytes need = m.layer_bytes(layer, batch);
  const uint64_t total = need.in_bytes + need.out_bytes + need.ws_bytes;
  Buffer temporary;
  const Buffer* arena = &arena_;
  if (!budget_set_) {
    temporary = Buffer(*device_, std::max<uint64_t>(total, 4), kStorageUsage, false, "time_layer arena");
    arena = &temporary;
  } else if (total > budget_) {
    throw sdk::Failure(FRUGAL_ERR_BUDGET, "time_layer: layer '" + L.name + "' at batch " + std::to_string(batch) + " needs " +
                                              format_bytes(total) + ", budget is " + format_bytes(budget_));
  }
  // Inputs, then output, then workspace, back to back; synthetic inputs in [-1, 1).
  Layout layout;
  layout.tensor_offset.assign(m.tensors().size(), 0);
  layout.ws_offset.assign(m.layers().size(), 0);
  uint64_t at = 0;
  uint32_t state = 12345u;
  for (int t : L.inputs) {
    layout.tensor_offset[size_t(t)] = at;
    std::vector<float> data(size_t(m.tensors()[size_t(t)].sample_elems * batch));
    for (float& v : data) {
      state = state * 1664525u + 1013904223u;
      v = float(state >> 8) / float(1u << 23) - 1.0f;
    }
    if (!data.empty()) device_->upload(*arena, at, data.data(), data.size() * 4);
    at += m.bytes(t, batch);
  }
  layout.tensor_offset[size_t(L.output)] = at;
  at += need.out_bytes;
  layout.ws_offset[size_t(layer)] = at;

  const DeviceFunctions& fn = device_->fn();
  if (recording_) {  // the run's recording may share the query pool
    recording_->batch = -1;
  }
  VkQueryPool pool = query_pool(uint32_t(2 * repeats));
  VkCommandBufferAllocateInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  ai.commandPool = command_pool_;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  VkCommandBuffer cb = VK_NULL_HANDLE;
  check(fn.vkAllocateCommandBuffers(device_->handle(), &ai, &cb), "vkAllocateCommandBuffers");
  std::vector<VkDescriptorSet> sets;
  struct Cleanup {
    Executor* ex;
    VkCommandBuffer cb;
    std::vector<VkDescriptorSet>& sets;
    ~Cleanup() {
      ex->device_->free_sets(sets);
      ex->device_->fn().vkFreeCommandBuffers(ex->device_->handle(), ex->command_pool_, 1, &cb);
    }
  } cleanup{this, cb, sets};
  const LayerIO io = layer_io(layer, layout, *arena, batch);
  std::vector<double> times;
  auto record_and_submit = [&](int timed) {
    check(fn.vkResetCommandBuffer(cb, 0), "vkResetCommandBuffer");
    VkCommandBufferBeginInfo bi{};
    bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    check(fn.vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer");
    Recorder r(*device_, cb, sets, options_.max_binding_bytes);
    if (pool && timed) fn.vkCmdResetQueryPool(cb, pool, 0, uint32_t(2 * timed));
    r.barrier();
    for (int i = 0; i < std::max(timed, 1); ++i) {
      if (pool && timed) r.timestamp(pool, uint32_t(2 * i), VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT);
      L.kernel->record(r, io);
      if (pool && timed) r.timestamp(pool, uint32_t(2 * i + 1), VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT);
      r.barrier();
    }
    check(fn.vkEndCommandBuffer(cb), "vkEndCommandBuffer");
    const double w0 = now_seconds();
    device_->submit_and_wait(cb);
    return now_seconds() - w0;
  };
  record_and_submit(0);  // warm-up
  device_->free_sets(sets);
  if (pool) {
    record_and_submit(repeats);
    times = read_timestamps(uint32_t(2 * repeats));
  } else {  // no timestamps on this queue: wall clock per submission
    for (int i = 0; i < repeats; ++i) {
      times.push_back(record_and_submit(0));
      device_->free_sets(sets);
    }
  }
  check_validation("time_layer");
  std::sort(times.begin(), times.end());
  const size_t h = times.size() / 2;
  median = times.size() % 2 ? times[h] : 0.5 * (times[h - 1] + times[h]);
  spread = times.back() - times.front();
}

// ---- gates -----------------------------------------------------------------------------------

void Executor::set_gates(int layer, int64_t n, const std::vector<float>& values, float threshold) {
  const Model& m = model_;
  if (layer < 0 || size_t(layer) >= m.layers().size()) throw Error("set_gates: layer index " + std::to_string(layer) + " is out of range");
  Kernel& k = *m.layers()[size_t(layer)].kernel;
  const int64_t M = k.gate_channels();
  if (M == 0) throw Error("set_gates: layer '" + m.layers()[size_t(layer)].name + "' is not a convolution");
  if (options_.dense_conv) throw Error("set_gates: this executor runs the dense conv variant (option conv = \"dense\")");
  if (n < 1 || int64_t(values.size()) != n * M)
    throw Error("set_gates: expected " + std::to_string(n) + " x " + std::to_string(M) + " gate values, got " + std::to_string(values.size()));
  device_->fn().vkDeviceWaitIdle(device_->handle());
  auto st = std::make_unique<GateState>();
  const uint64_t vbytes = uint64_t(n * M) * 4, ibytes = uint64_t(n * k.gate_list_length()) * 4, abytes = uint64_t(n) * 12;
  st->buffer = Buffer(*device_, vbytes + ibytes + abytes, kStorageUsage, false, "gates");
  device_->upload(st->buffer, 0, values.data(), vbytes);
  st->gating.values = Region{st->buffer.handle(), 0, vbytes};
  st->gating.indices = Region{st->buffer.handle(), vbytes, ibytes};
  st->gating.args = Region{st->buffer.handle(), vbytes + ibytes, abytes};
  st->gating.threshold = threshold;
  st->gating.n = n;
  k.set_gating(&st->gating);
  gates_[layer] = std::move(st);
  if (recording_) recording_->batch = -1;  // re-record
}

void Executor::clear_gates(int layer) {
  auto it = gates_.find(layer);
  if (it == gates_.end()) return;
  device_->fn().vkDeviceWaitIdle(device_->handle());
  model_.layers()[size_t(layer)].kernel->set_gating(nullptr);
  gates_.erase(it);
  if (recording_) recording_->batch = -1;
}

}  // namespace frugal::vk
