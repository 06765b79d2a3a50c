#include "vk_executor.h"

#include <dlfcn.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>

#include "common/arena_sentinel.h"
#include "common/gate_report.h"
#include "common/placement.h"
#include "frugal/error.h"
#include "frugal/model/onnx_import.h"
#include "frugal/plugin_sdk.hpp"
#include "vk_arena_sentinel.h"

#ifndef FRUGAL_BUILD_SHADER_DIR
#define FRUGAL_BUILD_SHADER_DIR "shaders"
#endif

namespace frugal::vk {

namespace {

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// An installed plugin (<prefix>/lib/frugal/plugins/vulkan.so) finds the shaders
// of its install (<prefix>/share/frugal/shaders); "" when that is not where it is.
std::string installed_shader_dir() {
  Dl_info info{};
  if (!dladdr(reinterpret_cast<void*>(&installed_shader_dir), &info) || !info.dli_fname) return "";
  std::error_code ec;
  const std::filesystem::path dir = std::filesystem::path(info.dli_fname).parent_path() / ".." / ".." / ".." /
                                    "share" / "frugal" / "shaders";
  if (!std::filesystem::exists(dir / "conv_gated.spv", ec)) return "";
  return std::filesystem::weakly_canonical(dir, ec).string();
}

// The test hook FRUGAL_VULKAN_FAULT (see Executor::run).
Fault fault_from_env() {
  const char* v = std::getenv("FRUGAL_VULKAN_FAULT");
  if (!v || !*v) return Fault::none;
  const std::string s = v;
  if (s == "device_lost") return Fault::device_lost;
  if (s == "timeout") return Fault::timeout;
  if (s == "hang") return Fault::hang;
  throw sdk::Failure(
      FRUGAL_ERR_INVALID_ARGUMENT,
      "FRUGAL_VULKAN_FAULT (a test hook) must be \"device_lost\", \"timeout\" or \"hang\", got \"" + s +
          "\"");
}

constexpr VkBufferUsageFlags kStorageUsage =
    VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT |
    VK_BUFFER_USAGE_INDIRECT_BUFFER_BIT |
    VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT;  // texel views: conv_texel

}  // namespace

// ---- options -------------------------------------------------------------------

static const char* winograd_name(WinogradMode m) {
  switch (m) {
    case WinogradMode::Off:
      return "off";
    case WinogradMode::F23:
      return "f23";
    case WinogradMode::F43:
      return "f43";
    default:
      return "auto";
  }
}

ExecutorOptions ExecutorOptions::parse(const char* json) {
  ExecutorOptions o;
  o.validation = validation_requested();
  {
    const nlohmann::json j = exec::parse_options_object(json, "{\"device\": 0}");
    {
      if (j.contains("device")) {
        const auto& v = j["device"];
        if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 1000)
          throw Error("option 'device' must be a device index (0, 1, ...; see `frugal devices`), got " +
                      v.dump());
        o.device = int(v.get<int64_t>());
      }
      if (j.contains("shader_dir")) {
        if (!j["shader_dir"].is_string())
          throw Error("option 'shader_dir' must be a string, got " + j["shader_dir"].dump());
        o.shader_dir = j["shader_dir"].get<std::string>();
      }
      if (j.contains("conv")) {
        const auto& v = j["conv"];
        if (!v.is_string() || (v != "dense" && v != "indirect"))
          throw Error("option 'conv' must be \"indirect\" (gating-ready, the default) or \"dense\", got " +
                      v.dump());
        o.dense_conv = v == "dense";
      }
      if (j.contains("winograd")) {
        const auto& v = j["winograd"];
        const std::string w = v.is_string() ? v.get<std::string>() : "";
        if (w != "auto" && w != "off" && w != "f23" && w != "f43")
          throw Error("option 'winograd' must be \"auto\" (the default), \"off\", \"f23\" or \"f43\", got " +
                      v.dump());
        o.winograd = w == "off"   ? WinogradMode::Off
                     : w == "f23" ? WinogradMode::F23
                     : w == "f43" ? WinogradMode::F43
                                  : WinogradMode::Auto;
      }
      if (j.contains("weight_storage")) {
        const auto& v = j["weight_storage"];
        if (!v.is_string() || (v != "fp32" && v != "fp16"))
          throw Error("option 'weight_storage' must be \"fp32\" (the default) or \"fp16\", got " + v.dump());
        o.weight_storage = v == "fp16" ? WeightStorage::F16 : WeightStorage::F32;
      }
      if (j.contains("conv_texel")) {
        const auto& v = j["conv_texel"];
        if (!v.is_string() || (v != "auto" && v != "on" && v != "off"))
          throw Error("option 'conv_texel' must be \"auto\" (the default), \"on\" or \"off\", got " +
                      v.dump());
        o.conv_texel = v.get<std::string>();
      }
      if (j.contains("gate_passes")) {
        const auto& v = j["gate_passes"];
        if (!v.is_string() || (v != "auto" && v != "flat" && v != "groups"))
          throw Error("option 'gate_passes' must be \"auto\" (the default), \"flat\" or \"groups\", got " +
                      v.dump());
        o.gate_passes = v.get<std::string>();
      }
      if (j.contains("pipeline_cache")) {
        const auto& v = j["pipeline_cache"];
        if (v.is_boolean())
          o.pipeline_cache = v.get<bool>() ? "" : "off";
        else if (v.is_string() && !v.get<std::string>().empty())
          o.pipeline_cache = v.get<std::string>();
        else
          throw Error("option 'pipeline_cache' must be true, false or a file name, got " + v.dump());
      }
      if (j.contains("timeout_s")) {
        const auto& v = j["timeout_s"];
        if (!v.is_number() || !(v.get<double>() > 0) || v.get<double>() > 1e6)
          throw Error("option 'timeout_s' must be a number of seconds in (0, 1e6], got " + v.dump());
        o.timeout_s = v.get<double>();
      }
      if (j.contains("gate_threshold")) {
        const auto& t = j["gate_threshold"];
        if (!t.is_number() || !(t.get<double>() >= 0.0 && t.get<double>() <= 1.0))
          throw Error("option 'gate_threshold' must be a number in [0, 1], got " + t.dump());
        o.gate_threshold = t.get<float>();
      }
      if (j.contains("gate_activity")) o.gate_activity = exec::GateActivity::parse(j["gate_activity"]);
      if (j.contains("min_groups")) {
        const auto& v = j["min_groups"];
        if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > 1000000)
          throw Error(
              "option 'min_groups' must be an integer in [0, 1000000] (0: never split a reduction), got " +
              v.dump());
        o.min_groups = v.get<int64_t>();
      }
      if (j.contains("conv_step")) {
        const auto& v = j["conv_step"];
        if (!v.is_number_integer() ||
            (v.get<int64_t>() != 8 && v.get<int64_t>() != 16 && v.get<int64_t>() != 32))
          throw Error("option 'conv_step' must be 8, 16 or 32, got " + v.dump());
        o.conv_step = v.get<int64_t>();
      }
      if (j.contains("staged_io")) {
        if (!j["staged_io"].is_boolean())
          throw Error("option 'staged_io' must be true or false, got " + j["staged_io"].dump());
        o.staged_io = j["staged_io"].get<bool>();
      }
      if (j.contains("warm_up_ms")) {
        const auto& v = j["warm_up_ms"];
        if (!v.is_number() || !(v.get<double>() >= 0) || v.get<double>() > 1000)
          throw Error("option 'warm_up_ms' must be a number of milliseconds in [0, 1000], got " + v.dump());
        o.warm_up_ms = v.get<double>();
      }
      if (j.contains("max_binding_bytes")) {
        const auto& v = j["max_binding_bytes"];
        if (!v.is_number_integer() || v.get<int64_t>() < 256)
          throw Error("option 'max_binding_bytes' must be an integer >= 256, got " + v.dump());
        o.max_binding_bytes = v.get<uint64_t>();
      }
    }
  }
  if (o.min_groups < 0) {
    const char* env = std::getenv("FRUGAL_VULKAN_MIN_GROUPS");
    if (env && *env) {
      char* end = nullptr;
      const long v = std::strtol(env, &end, 10);
      if (*end != '\0' || v < 0 || v > 1000000)
        throw Error(std::string("FRUGAL_VULKAN_MIN_GROUPS must be an integer in [0, 1000000], got ") + env);
      o.min_groups = v;
    }
  }
  if (o.conv_texel == "auto") {  // a test hook too: whole runs with texels on or off, from any tool
    const char* env = std::getenv("FRUGAL_VULKAN_CONV_TEXEL");
    if (env && *env) {
      const std::string v = env;
      if (v != "auto" && v != "on" && v != "off")
        throw Error("FRUGAL_VULKAN_CONV_TEXEL must be \"auto\", \"on\" or \"off\", got " + v);
      o.conv_texel = v;
    }
  }
  if (o.warm_up_ms < 0) {
    o.warm_up_ms = kDefaultWarmUpMs;
    const char* env = std::getenv("FRUGAL_VULKAN_WARM_UP_MS");
    if (env && *env) {
      char* end = nullptr;
      const double v = std::strtod(env, &end);
      if (*end != '\0' || !(v >= 0) || v > 1000)
        throw Error(std::string("FRUGAL_VULKAN_WARM_UP_MS must be a number in [0, 1000], got ") + env);
      o.warm_up_ms = v;
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
  int64_t batch = -1;  // what it was recorded for (-1: nothing valid)
  VkBuffer arena = VK_NULL_HANDLE;
  std::vector<PlanStep> steps;
  uint32_t queries = 0;
  // Inputs and outputs copied through the device's staging buffer inside the
  // recording (one submission per run), when they fit in it.
  struct StagedCopy {
    size_t tensor = 0;            // input or output index
    uint64_t staging_offset = 0;  // in the staging buffer
    uint64_t host_offset = 0;     // in the caller's tensor
    uint64_t arena_offset = 0;    // in the arena
    uint64_t bytes = 0;           // > 0 (empty tensors are not copied)
  };
  bool staged = false;
  std::vector<StagedCopy> staged_inputs, staged_outputs;
};

Executor::Executor(const void* onnx, size_t size, const ExecutorOptions& options, const sdk::WeightDone& done)
    : options_(options), model_(load_onnx_bytes(onnx, size, "model", true, done), options.gate_threshold) {
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
  if (options_.min_groups <
      0)  // docs/VULKAN.md, "Split-K": GPUs only; a CPU device is busy with a few groups
    options_.min_groups = device_->info().vk_type == VK_PHYSICAL_DEVICE_TYPE_CPU ? 0 : kDefaultMinGroups;
  if (options_.conv_step < 0)  // docs/VULKAN.md, "Conv kernels": a barrier costs more on a CPU device
    options_.conv_step = device_->info().vk_type == VK_PHYSICAL_DEVICE_TYPE_CPU ? 32 : 8;
  TileLimits tiles = device_->tile_limits();
  tiles.min_groups = uint32_t(options_.min_groups);
  tiles.long_step = uint32_t(options_.conv_step);
  if (options_.conv_texel == "auto")  // docs/VULKAN.md, "Texel operands": measured on lavapipe only
    options_.conv_texel = device_->info().vk_type == VK_PHYSICAL_DEVICE_TYPE_CPU ? "on" : "off";
  if (options_.gate_passes == "auto")  // docs/GATING.md, "Vulkan on lavapipe": a barrier costs more there
    options_.gate_passes = device_->info().vk_type == VK_PHYSICAL_DEVICE_TYPE_CPU ? "flat" : "groups";
  tiles.flat_gate_passes = options_.gate_passes == "flat";
  WeightPacker packer(device_->binding_alignment(), device_->workgroup_1d(), options_.max_binding_bytes,
                      tiles, options_.winograd, options_.weight_storage, options_.conv_texel == "on");
  std::vector<std::pair<uint64_t, uint64_t>> blocks;
  for (size_t l = 0; l < model_.layers().size(); ++l) {
    packer.begin_block();  // every layer's block starts aligned, even an empty one
    model_.kernel(int(l)).pack(packer);
    blocks.emplace_back(packer.block_offset(), packer.block_bytes());
  }
  const uint64_t weight_bytes = std::max<uint64_t>(packer.words().size() * 4, 16);
  weights_ = Buffer(*device_, weight_bytes, kStorageUsage, false, "weights buffer");
  if (!packer.words().empty())
    device_->upload(weights_, 0, packer.words().data(), packer.words().size() * 4, options_.timeout_s);
  for (const auto& b : blocks) weight_blocks_.push_back(Region{weights_.handle(), b.first, b.second});
  for (size_t l = 0; l < model_.layers().size(); ++l)
    model_.kernel(int(l)).create_pipelines(*device_, shaders_);
  device_->save_pipeline_cache();  // the next start finds the compiled pipelines
  for (const Layer& L : model_.layers()) has_model_gates_ = has_model_gates_ || L.gate_kernels > 0;
  if (has_model_gates_)
    gate_counts_ = Buffer(*device_, model_.layers().size() * 8, kStorageUsage, false, "gate counts");

  VkCommandPoolCreateInfo pi{};
  pi.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pi.queueFamilyIndex = uint32_t(device_->info().compute_queue_family);
  check(device_->fn().vkCreateCommandPool(device_->handle(), &pi, nullptr, &command_pool_),
        "vkCreateCommandPool");
  check_validation("create");
}

Executor::~Executor() {
  const DeviceFunctions& fn = device_->fn();
  fn.vkDeviceWaitIdle(device_->handle());
  if (recording_) device_->free_sets(recording_->sets);
  if (query_pool_) fn.vkDestroyQueryPool(device_->handle(), query_pool_, nullptr);
  if (command_pool_) fn.vkDestroyCommandPool(device_->handle(), command_pool_, nullptr);
}

uint64_t Executor::validation_errors() const {
  return device_->instance().validation_errors() - validation_base_;
}

void Executor::check_validation(const std::string& what) const {
  const uint64_t n = validation_errors();
  if (n == 0) return;
  std::string msg =
      what + ": the Vulkan validation layer reported " + std::to_string(n) + " error" + (n == 1 ? "" : "s");
  const std::vector<std::string> first = device_->instance().validation_messages();
  if (!first.empty()) msg += "; first: " + first[0];
  throw sdk::Failure(FRUGAL_ERR_DEVICE, msg);
}

// ---- a lost or hung device ---------------------------------------------------------

void Executor::release_after_failure(Buffer& temporary) {
  if (device_->lost()) {  // nothing runs any more: the memory can go
    if (recording_) {
      device_->free_sets(recording_->sets);
      recording_->batch = -1;
      recording_->arena = VK_NULL_HANDLE;
    }
    temporary = Buffer();
    arena_ = Buffer();
  } else {  // a timeout: the device may still be reading and writing them
    if (temporary) held_after_timeout_.push_back(std::move(temporary));
    if (arena_) held_after_timeout_.push_back(std::move(arena_));
    if (recording_) recording_->batch = -1;
  }
  budget_ = 0;
  budget_set_ = false;
}

void Executor::fail_after_device_failure(const std::string& what, const sdk::Failure& cause,
                                         Buffer& temporary) {
  const uint64_t arena_bytes = std::max(arena_.size(), temporary.size());
  release_after_failure(temporary);
  std::string msg = what + ": " + cause.what() + "; ";
  if (arena_bytes == 0)
    msg += "no arena was allocated";
  else if (device_->lost())
    msg += "the arena (" + format_bytes(arena_bytes) + ") was freed";
  else
    msg += "the arena (" + format_bytes(arena_bytes) +
           ") stays allocated until this executor is destroyed, as the device may still be using it";
  msg += "; this executor refuses further work: destroy it and create a new one (it gets a new device)";
  throw sdk::Failure(FRUGAL_ERR_DEVICE, msg);
}

void Executor::refuse_if_device_failed(const std::string& what) {
  const std::string failure = device_->failure();
  if (failure.empty()) return;
  release_after_failure(auto_arena_);  // another executor on this device may have seen it fail
  throw sdk::Failure(FRUGAL_ERR_DEVICE, what + ": refused, the device failed earlier (" + failure +
                                            "); destroy this executor and create a new one");
}

// ---- describe, layer_bytes, budget ---------------------------------------------------

int64_t Executor::split_layers() const {
  int64_t n = 0;
  for (size_t l = 0; l < model_.layers().size(); ++l) n += model_.kernel(int(l)).reduction_split() > 1;
  return n;
}

int64_t Executor::texel_layers() const {
  int64_t n = 0;
  for (size_t l = 0; l < model_.layers().size(); ++l) n += model_.kernel(int(l)).texel_operands();
  return n;
}

std::string Executor::describe_json() const {
  using nlohmann::json;
  json d = exec::describe_graph(model_);
  d["device"] = "vulkan: " + device_->description();
  d["vulkan"] = {{"physical_device", device_->info().to_json()},
                 {"conv", options_.dense_conv ? "dense" : "indirect"},
                 {"winograd", winograd_name(options_.winograd)},
                 {"weight_storage", options_.weight_storage == WeightStorage::F16 ? "fp16" : "fp32"},
                 {"conv_texel", options_.conv_texel},
                 {"gate_passes", options_.gate_passes},
                 {"texel_layers", texel_layers()},
                 {"min_groups", options_.min_groups},
                 {"conv_step", options_.conv_step},
                 {"warm_up_ms", options_.warm_up_ms},
                 {"split_layers", split_layers()},
                 {"shader_dir", shaders_.dir},
                 {"pipeline_cache", device_->pipeline_cache_path()},
                 {"pipeline_cache_loaded", device_->pipeline_cache_loaded()},
                 {"pipelines_built", device_->pipelines_built()},
                 {"workgroup_1d", device_->workgroup_1d()},
                 {"matmul_tile", device_->matmul_tile()},
                 {"max_binding_bytes", options_.max_binding_bytes},
                 {"weights_bytes", weights_.size()},
                 {"arena_bytes", arena_.size()},
                 {"timeout_s", options_.timeout_s},
                 {"device_failure", device_->failure()},
                 {"validation", options_.validation},
                 {"validation_errors", validation_errors()}};
  if (!options_.gate_activity.given.is_null()) d["gate_activity"] = options_.gate_activity.given;
  return d.dump();
}

frugal_layer_bytes Executor::layer_bytes(int layer, int batch) const {
  exec::check_layer_and_batch(model_, "layer_bytes", layer, batch);
  return model_.layer_bytes(layer, batch);
}

void Executor::set_budget(uint64_t bytes) {
  refuse_if_device_failed("set_budget");
  // Refused before the old arena goes: a budget no buffer can have changes nothing.
  const std::string device = device_->info().name;
  const uint64_t heap = device_->largest_device_heap();
  if (heap && bytes > heap)
    throw sdk::Failure(FRUGAL_ERR_OUT_OF_MEMORY, "set_budget: " + format_bytes(bytes) + " is more than " +
                                                     device +
                                                     " can allocate: its largest device-local "
                                                     "memory heap is " +
                                                     format_bytes(heap) + "; the budget is unchanged");
  const uint64_t max_alloc = device_->info().max_allocation_bytes;
  if (max_alloc && bytes > max_alloc)
    throw sdk::Failure(FRUGAL_ERR_OUT_OF_MEMORY,
                       "set_budget: " + format_bytes(bytes) + " is more than " + device +
                           " can allocate in one buffer (maxMemoryAllocationSize " + format_bytes(max_alloc) +
                           ") and the arena is one buffer; the budget is unchanged");
  device_->fn().vkDeviceWaitIdle(device_->handle());
  if (recording_) {  // it points into the old arena
    device_->free_sets(recording_->sets);
    recording_->batch = -1;
    recording_->arena = VK_NULL_HANDLE;
  }
  budget_set_ = false;
  arena_ = Buffer();
  auto_arena_ = Buffer();  // runs use the budget's from now on
  if (bytes > 0) {
    try {
      arena_ = Buffer(*device_, exec::arena_allocation_bytes(bytes), kStorageUsage, false,
                      "arena of " + format_bytes(bytes));
    } catch (const sdk::Failure& f) {
      throw sdk::Failure(f.status, std::string("set_budget: ") + f.what() +
                                       "; the previous arena was freed first, so no budget is set now");
    }
  }
  budget_ = bytes;
  budget_set_ = true;
}

// ---- run ---------------------------------------------------------------------------------

LayerIO Executor::layer_io(int l, int64_t n, const std::vector<uint64_t>& in_offsets, uint64_t out_offset,
                           uint64_t ws_offset, const Buffer& arena) const {
  const Model& m = model_;
  const Layer& L = m.layers()[size_t(l)];
  LayerIO io;
  io.n = m.batched() ? n : 1;
  io.batched = m.batched();
  for (size_t i = 0; i < L.node_inputs.size(); ++i) {
    const int t = L.node_inputs[i];
    io.in.push_back(t < 0 ? Region{} : Region{arena.handle(), in_offsets[i], m.bytes(t, n)});
  }
  io.out = Region{arena.handle(), out_offset, m.bytes(L.output, n)};
  const uint64_t ws = m.layer_bytes(l, n).ws_bytes;
  if (ws) io.ws = Region{arena.handle(), ws_offset, ws};
  io.weights = weight_blocks_[size_t(l)];
  if (gate_counts_ && (L.gate_kernels > 0 || L.skips_off_channels))
    io.stats = Region{gate_counts_.handle(), uint64_t(l) * 8, 8};
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

std::vector<double> Executor::read_timestamps(uint32_t queries, uint32_t first, bool chained) const {
  std::vector<double> seconds;
  if (!query_pool_ || queries == 0) return seconds;
  std::vector<uint64_t> ticks(queries);
  check(device_->fn().vkGetQueryPoolResults(device_->handle(), query_pool_, first, queries,
                                            queries * sizeof(uint64_t), ticks.data(), sizeof(uint64_t),
                                            VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT),
        "vkGetQueryPoolResults");
  const uint32_t bits = device_->info().timestamp_valid_bits;
  const uint64_t mask = bits >= 64 ? ~uint64_t(0) : ((uint64_t(1) << bits) - 1);
  for (uint32_t q = 0; q + 1 < queries; q += 2) {
    const uint64_t d = (ticks[q + 1] - ticks[chained && q > 0 ? q - 1 : q]) & mask;
    seconds.push_back(double(d) * device_->timestamp_period_ns() * 1e-9);
  }
  return seconds;
}

namespace {

// The copy commands the placement's moves are recorded as (pieces no longer than each shift).
uint64_t move_copies(const Placement& placed) {
  uint64_t n = 0;
  for (const exec::PlacedStep& ps : placed.steps)
    for (const exec::OffsetAllocator::Move& mv : ps.moves) n += exec::non_overlapping_pieces(mv).size();
  return n;
}

bool same_steps(const std::vector<PlanStep>& a, const std::vector<PlanStep>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].layer != b[i].layer || a[i].first != b[i].first || a[i].count != b[i].count) return false;
  return true;
}

}  // namespace

std::vector<exec::GateStats> Executor::gate_stats(const Plan& plan, const std::vector<uint32_t>& on) const {
  const Model& m = model_;
  std::vector<exec::GateStats> stats(m.layers().size());
  for (const PlanStep& st : plan.steps) stats[size_t(st.layer)].samples += st.count;
  for (size_t l = 0; l < stats.size(); ++l) {
    const Layer& L = m.layers()[l];
    exec::GateStats& g = stats[l];
    if (L.gate_kernels == 0 && !L.skips_off_channels) continue;
    const int64_t channels = L.gate_kernels > 0 ? L.gate_macs_per_sample / L.gate_kernels : 0;
    g.kernels = g.samples * L.gate_kernels;
    g.kernels_on = 2 * l < on.size() ? int64_t(on[2 * l]) : 0;
    // The gate's 1x1 on every sample; the layer's MACs for the (output, input
    // channel) pairs that ran: switched-on kernels, input channels not all zero.
    const double dense = double(L.macs_per_sample - L.gate_macs_per_sample);
    const double pairs_dense = L.skips_off_channels ? double(m.kernel(int(l)).skip_pairs())
                                                    : double(L.gate_kernels) * double(channels);
    const double pairs = L.skips_off_channels ? double(2 * l + 1 < on.size() ? on[2 * l + 1] : 0)
                                              : double(g.kernels_on) * double(channels);
    g.macs = L.gate_macs_per_sample * g.samples + int64_t(std::llround(dense / pairs_dense * pairs));
  }
  return stats;
}

// Where a run's inputs and outputs lie in the staging buffer, when all fit in
// it (16 MiB: a batch of 12 224 x 224 images is 7.2 MB); else none are staged
// and run() copies them in submissions of their own.
void Executor::plan_staged_copies(Recording& rec, const Placement& placed, int64_t batch) const {
  const Model& m = model_;
  rec.staged_inputs.clear();
  rec.staged_outputs.clear();
  uint64_t at = 0;
  auto place = [&](size_t tensor, uint64_t host_offset, uint64_t arena_offset, uint64_t bytes,
                   std::vector<Recording::StagedCopy>& to) {
    if (bytes == 0) return;  // an empty tensor's data may be null: nothing to copy
    to.push_back({tensor, at, host_offset, arena_offset, bytes});
    at += (bytes + 255) & ~uint64_t(255);
  };
  for (size_t k = 0; k < placed.input_offsets.size(); ++k)
    place(k, 0, placed.input_offsets[k], m.sample_bytes(m.inputs()[k]) * uint64_t(batch), rec.staged_inputs);
  for (size_t k = 0; k < placed.outputs.size(); ++k) {
    const uint64_t sb = m.sample_bytes(m.outputs()[k]);
    for (const exec::PlacedPiece& p : placed.outputs[k])
      place(k, uint64_t(p.first) * sb, p.offset, uint64_t(p.count) * sb, rec.staged_outputs);
  }
  rec.staged = options_.staged_io && at <= device_->staging().size();
  if (!rec.staged) rec.staged_inputs.clear(), rec.staged_outputs.clear();
}

void Executor::record_run(Recording& rec, const Plan& plan, const Placement& placed, const Buffer& arena,
                          int64_t batch) {
  const DeviceFunctions& fn = device_->fn();
  const uint32_t queries = uint32_t(2 * plan.steps.size());
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
  rec.batch = -1;  // until the recording is complete
  check(fn.vkResetCommandBuffer(rec.cb, 0), "vkResetCommandBuffer");
  VkCommandBufferBeginInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
  check(fn.vkBeginCommandBuffer(rec.cb, &bi), "vkBeginCommandBuffer");
  Recorder r(*device_, rec.cb, rec.sets, options_.max_binding_bytes);
  if (pool) fn.vkCmdResetQueryPool(rec.cb, pool, 0, queries);
  if (gate_counts_) r.fill(Region{gate_counts_.handle(), 0, gate_counts_.size()}, 0);
  plan_staged_copies(rec, placed, batch);
  const VkBuffer staging = rec.staged ? device_->staging().handle() : VK_NULL_HANDLE;
  for (const Recording::StagedCopy& c : rec.staged_inputs)
    r.copy(Region{staging, c.staging_offset, c.bytes}, Region{arena.handle(), c.arena_offset, c.bytes});
  r.barrier();  // the inputs' upload (and the counts' zeroing)
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep& s = plan.steps[i];
    const exec::PlacedStep& ps = placed.steps[i];
    // Both stamps at the bottom of the pipe: one at the top is written as soon as
    // the queue reaches it, which the barrier before (compute and transfer stages
    // only) does not hold back, so it could include the previous step's tail.
    // The first stamp comes before the step's moves, which are a cost of the
    // step (the later steps' times run from the previous step's end anyway; the
    // first step's moves were outside every stamp: gated alexnet's 7 ms at
    // batch 1 on an H200, docs/GATING.md).
    if (pool) r.timestamp(pool, uint32_t(2 * i), VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT);
    // Where the allocator moved chunks before this step: move them as it did.
    for (const exec::OffsetAllocator::Move& mv : ps.moves) r.move(arena.handle(), mv.from, mv.to, mv.bytes);
    if (!ps.moves.empty()) r.barrier();
    // One call on all the step's samples (each input lies in one block).
    if (product(model_.dims_at(model_.layers()[size_t(s.layer)].output, s.count)) != 0) {
      LayerIO io = layer_io(s.layer, s.count, ps.in_offsets, ps.out_offset, ps.ws_offset, arena);
      io.first = s.first;
      model_.kernel(s.layer).record(r, io);
    }
    if (pool) r.timestamp(pool, uint32_t(2 * i + 1), VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT);
    r.barrier();
  }
  for (const Recording::StagedCopy& c : rec.staged_outputs)
    r.copy(Region{arena.handle(), c.arena_offset, c.bytes}, Region{staging, c.staging_offset, c.bytes});
  if (rec.staged) r.host_read_barrier();
  check(fn.vkEndCommandBuffer(rec.cb), "vkEndCommandBuffer");
  rec.batch = batch;
  rec.arena = arena.handle();
  rec.steps = plan.steps;
  rec.queries = pool ? queries : 0;
}

// The recorded run with its inputs and outputs copied through the staging
// buffer: one submission, where separate uploads and downloads cost a round
// trip each (a plan's output in 12 pieces: 12 of them).
void Executor::submit_staged(const Recording& rec, const std::vector<const frugal_tensor*>& ins,
                             const std::vector<frugal_tensor*>& outs, Fault fault) {
  auto fill = [&](void* staging) {
    for (const Recording::StagedCopy& c : rec.staged_inputs)
      std::memcpy(static_cast<char*>(staging) + c.staging_offset,
                  static_cast<const char*>(ins[c.tensor]->data) + c.host_offset, c.bytes);
  };
  auto drain = [&](const void* staging) {
    for (const Recording::StagedCopy& c : rec.staged_outputs)
      std::memcpy(static_cast<char*>(outs[c.tensor]->data) + c.host_offset,
                  static_cast<const char*>(staging) + c.staging_offset, c.bytes);
  };
  device_->staged_submit(rec.cb, fill, drain, options_.timeout_s, fault);
}

// The arena of a run without a budget: exactly what the plan needs, kept for
// the next run, so that repeated runs of one plan reuse it and its recording
// (on an NVIDIA H200, recording googlenet's 770 dispatches at batch 8 took
// about as long as running them).
const Buffer& Executor::auto_arena(uint64_t capacity) {
  const uint64_t bytes = capacity > 0 ? exec::arena_allocation_bytes(capacity) : 0;
  if (auto_arena_.size() == bytes) return auto_arena_;
  if (recording_ && recording_->arena == auto_arena_.handle()) {  // it points into the old one
    device_->free_sets(recording_->sets);
    recording_->batch = -1;
    recording_->arena = VK_NULL_HANDLE;
  }
  auto_arena_ = Buffer();
  if (bytes > 0)
    auto_arena_ = Buffer(*device_, bytes, kStorageUsage, false, "arena of " + format_bytes(capacity));
  return auto_arena_;
}

std::string Executor::run(const char* plan_json, const frugal_tensor* inputs, size_t n_inputs,
                          frugal_tensor* outputs, size_t n_outputs) {
  const Model& m = model_;
  refuse_if_device_failed("run");
  const Fault fault = fault_from_env();
  const exec::Request req = exec::check_request(m, plan_json, inputs, n_inputs, outputs, n_outputs);
  const std::vector<const frugal_tensor*>& ins = req.inputs;
  const std::vector<frugal_tensor*>& outs = req.outputs;
  const int64_t batch = req.batch;
  const Plan& plan = req.plan;
  for (const auto& kv : gates_)  // each step reads the gate values of its own samples
    if (kv.second->gating.n != batch)
      throw Error("run: gates of layer '" + m.layers()[size_t(kv.first)].name + "' were set for " +
                  std::to_string(kv.second->gating.n) + " samples, the request has " + std::to_string(batch));
  const exec::PlanMemory predicted = exec::simulate_plan(m, plan, batch);  // validates the plan
  const bool auto_budget = !budget_set_;
  if (!auto_budget) exec::check_budget(m, plan, batch, budget_);
  const uint64_t capacity = auto_budget ? predicted.peak : budget_;  // the arena: exactly this many bytes
  const Placement placed = exec::place_plan(m, plan, batch, capacity);

  const Buffer* arena = auto_budget ? &auto_arena(capacity) : &arena_;

  const double t0 = now_seconds();
  const double timeout = options_.timeout_s;
  uint64_t touched = 0;
  std::vector<uint32_t> gate_on;  // per layer: kernels its gate switched on, (kernel, channel) pairs run
  HostPhases phases;
  try {
    if (!recording_) recording_ = std::make_unique<Recording>();
    if (recording_->batch != batch || recording_->arena != arena->handle() ||
        !same_steps(recording_->steps, plan.steps)) {
      record_run(*recording_, plan, placed, *arena, batch);
      phases.record = now_seconds() - t0;
    }
    if (exec::arena_sentinel_on()) fill_arena_sentinel(*device_, *arena, timeout);
    const double t_submit = now_seconds();
    if (recording_->staged) {
      submit_staged(*recording_, ins, outs, fault);
    } else {
      for (size_t k = 0; k < ins.size(); ++k)
        if (ins[k]->bytes)
          device_->upload(*arena, placed.input_offsets[k], ins[k]->data, ins[k]->bytes, timeout);
      device_->submit_and_wait(recording_->cb, timeout, fault);
      for (size_t k = 0; k < outs.size(); ++k) {
        const uint64_t sb = m.sample_bytes(m.outputs()[k]);
        for (const exec::PlacedPiece& p : placed.outputs[k])
          if (sb && p.count)
            device_->download(*arena, p.offset, static_cast<char*>(outs[k]->data) + uint64_t(p.first) * sb,
                              uint64_t(p.count) * sb, timeout);
      }
    }
    phases.submit = now_seconds() - t_submit;
    check_validation("run");
    if (exec::arena_sentinel_on()) touched = arena_touched_bytes(*device_, *arena, timeout);
    if (gate_counts_) {
      const double t_gates = now_seconds();
      gate_on.resize(2 * m.layers().size());
      device_->download(gate_counts_, 0, gate_on.data(), gate_on.size() * 4, timeout);
      phases.gate_counts = now_seconds() - t_gates;
    }
  } catch (const sdk::Failure& f) {
    if (device_->failure().empty()) throw;
    fail_after_device_failure("run", f, auto_arena_);
  }
  const double seconds = now_seconds() - t0;
  // A step's time runs from the previous step's end: the barrier, moves and
  // pipeline refill before its kernels are a cost of having the step (on an
  // H100, about 10 us a step that the kernels' own stamps left out).
  const std::vector<double> gpu = read_timestamps(recording_->queries, 0, true);

  nlohmann::json steps = nlohmann::json::array();
  double gpu_total = 0;
  for (size_t i = 0; i < plan.steps.size(); ++i) {
    const PlanStep& st = plan.steps[i];
    uint64_t moved = 0;
    for (const exec::OffsetAllocator::Move& mv : placed.steps[i].moves) moved += mv.bytes;
    const bool empty = product(m.dims_at(m.layers()[size_t(st.layer)].output, st.count)) == 0;
    nlohmann::json s = {{"layer", m.layers()[size_t(st.layer)].name},
                        {"first", st.first},
                        {"count", st.count},
                        {"calls", empty ? 0 : 1},
                        {"moved_bytes", moved}};
    if (i < gpu.size()) {
      s["seconds"] = gpu[i];
      gpu_total += gpu[i];
    }
    steps.push_back(s);
  }
  nlohmann::json report = {{"peak_bytes", placed.peak},
                           {"predicted_peak_bytes", predicted.peak},
                           {"extent_bytes", placed.extent},
                           {"budget_bytes", capacity},
                           {"arena_bytes", arena->size()},
                           {"auto_budget", auto_budget},
                           {"batch", batch},
                           {"seconds", seconds},
                           {"compactions", placed.compactions},
                           {"moved_bytes", placed.moved_bytes},
                           {"move_copies", move_copies(placed)},
                           {"validation_errors", validation_errors()},
                           {"steps", steps}};
  if (!gpu.empty()) report["gpu_seconds"] = gpu_total;
  report["host_seconds"] = {
      {"record", phases.record}, {"submit", phases.submit}, {"gate_counts", phases.gate_counts}};
  if (has_model_gates_) report["gates"] = exec::gate_report(m, gate_stats(plan, gate_on));
  if (exec::arena_sentinel_on()) report["touched_bytes"] = touched;
  return report.dump();
}

// ---- time_layer ----------------------------------------------------------------------------

void Executor::time_layer(int layer, int batch, int repeats, double& median, double& spread) {
  const Model& m = model_;
  exec::check_time_layer(m, layer, batch, repeats);
  refuse_if_device_failed("time_layer");
  if (gates_.count(layer))
    throw Error("time_layer: layer '" + m.layers()[size_t(layer)].name + "' is gated; clear its gates first");
  const Layer& L = m.layers()[size_t(layer)];
  const frugal_layer_bytes need = m.layer_bytes(layer, batch);
  const uint64_t total = need.in_bytes + need.out_bytes + need.ws_bytes;
  Buffer temporary;
  const Buffer* arena = &arena_;
  if (!budget_set_) {
    temporary = Buffer(*device_, std::max<uint64_t>(total, 4), kStorageUsage, false, "time_layer arena");
    arena = &temporary;
  } else if (total > budget_) {
    throw sdk::Failure(FRUGAL_ERR_BUDGET, "time_layer: layer '" + L.name + "' at batch " +
                                              std::to_string(batch) + " needs " + format_bytes(total) +
                                              ", budget is " + format_bytes(budget_));
  }
  // Inputs, then output, then workspace, back to back; synthetic inputs in [-1, 1),
  // a gate's consumer at a stated activity gets the off channels of input 0 as zeros.
  const std::optional<double> activity = options_.gate_activity.of(L.name);
  std::vector<uint64_t> in_at(L.node_inputs.size(), 0);
  uint64_t at = 0;
  uint32_t state = 12345u;
  for (int t : L.inputs) {
    for (size_t i = 0; i < L.node_inputs.size(); ++i)
      if (L.node_inputs[i] == t) in_at[i] = at;
    std::vector<float> data(size_t(m.tensors()[size_t(t)].sample_elems * batch));
    for (float& v : data) {
      state = state * 1664525u + 1013904223u;
      v = float(state >> 8) / float(1u << 23) - 1.0f;
    }
    if (activity && L.skips_off_channels && L.zero_block > 0 && t == L.node_inputs[0])
      exec::zero_off_channels(data.data(), batch, m.tensors()[size_t(t)].sample_elems / L.zero_block,
                              L.zero_block, *activity);
    if (!data.empty()) device_->upload(*arena, at, data.data(), data.size() * 4, options_.timeout_s);
    at += m.bytes(t, batch);
  }
  const uint64_t out_at = at, ws_at = at + need.out_bytes;

  LayerIO io = layer_io(layer, batch, in_at, out_at, ws_at, *arena);
  if (activity && L.gate_kernels > 0) io.gate_activity = *activity;
  std::vector<double> times = time_commands(repeats, [&](Recorder& r) { m.kernel(layer).record(r, io); });
  check_validation("time_layer");
  exec::median_and_spread(times, median, spread);
}

std::string Executor::place_json(const char* plan_json, int32_t batch, uint64_t capacity) const {
  const Plan plan = plan_json ? exec::parse_plan(plan_json, model_) : exec::whole_batch_plan(model_, batch);
  return exec::placement_summary_json(model_, plan, batch, capacity);
}

double Executor::time_move(uint64_t capacity, int32_t repeats) {
  refuse_if_device_failed("time_move");
  // Three quarters of a block of that size down by the rest, as the
  // allocator's moves are recorded (non-overlapping pieces, barriers between).
  const uint64_t shift = (capacity / 4) & ~uint64_t(63), bytes = capacity - shift;
  Buffer block(*device_, capacity, kStorageUsage, false, "time_move block");
  std::vector<double> times =
      time_commands(repeats, [&](Recorder& r) { r.move(block.handle(), shift, 0, bytes); });
  check_validation("time_move");
  double median = 0, spread = 0;
  exec::median_and_spread(times, median, spread);
  return median / double(bytes);
}

namespace {
// A GPU that idled between two measurements runs its first milliseconds of work
// at a low clock (an NVIDIA H200 idles at 345 MHz and boosts to 1980): timed
// from idle, resnet50's convs were priced at up to 4x what they took inside a
// run. So the commands run back to back for about this much GPU time, in the
// same submission as the timed repeats, before them.
constexpr double kWarmSeconds = 0.005;
constexpr int kMaxWarmRuns = 4096;
}  // namespace

std::vector<double> Executor::time_commands(int repeats, const std::function<void(Recorder&)>& record_one) {
  const DeviceFunctions& fn = device_->fn();
  if (recording_) {  // the run's recording may share the query pool
    recording_->batch = -1;
  }
  // Queries [0, 2 repeats): the timed repeats; the last two: the warm-up run.
  const uint32_t warm_query = uint32_t(2 * repeats);
  VkQueryPool pool = query_pool(warm_query + 2);
  VkCommandBufferAllocateInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  ai.commandPool = command_pool_;
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 2;
  VkCommandBuffer cbs[2] = {VK_NULL_HANDLE, VK_NULL_HANDLE};  // the warm-up run, the timed repeats
  check(fn.vkAllocateCommandBuffers(device_->handle(), &ai, cbs), "vkAllocateCommandBuffers");
  std::vector<VkDescriptorSet> sets;
  struct Cleanup {
    Executor* ex;
    VkCommandBuffer* cbs;
    std::vector<VkDescriptorSet>& sets;
    ~Cleanup() {
      ex->device_->free_sets(sets);
      ex->device_->fn().vkFreeCommandBuffers(ex->device_->handle(), ex->command_pool_, 2, cbs);
    }
  } cleanup{this, cbs, sets};
  // Records one command buffer: `runs` times the commands, each between
  // timestamps `first` + 2i and + 2i + 1 when the queue has them.
  auto record = [&](VkCommandBuffer cb, VkCommandBufferUsageFlags usage, int runs, uint32_t first) {
    VkCommandBufferBeginInfo bi{};
    bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    bi.flags = usage;
    check(fn.vkBeginCommandBuffer(cb, &bi), "vkBeginCommandBuffer");
    Recorder r(*device_, cb, sets, options_.max_binding_bytes);
    if (pool) fn.vkCmdResetQueryPool(cb, pool, first, uint32_t(2 * runs));
    r.barrier();
    for (int i = 0; i < runs; ++i) {
      // At the bottom of the pipe: when every command before has finished (record_run says why).
      if (pool) r.timestamp(pool, first + uint32_t(2 * i), VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT);
      record_one(r);
      if (pool) r.timestamp(pool, first + uint32_t(2 * i + 1), VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT);
      r.barrier();
    }
    check(fn.vkEndCommandBuffer(cb), "vkEndCommandBuffer");
  };
  auto submit = [&](const std::vector<VkCommandBuffer>& list) {
    const double w0 = now_seconds();
    device_->submit_and_wait(list, options_.timeout_s);
    return now_seconds() - w0;
  };
  // The warm-up run, alone: its time says how often to repeat it to warm the GPU up.
  record(cbs[0], VK_COMMAND_BUFFER_USAGE_SIMULTANEOUS_USE_BIT, 1, warm_query);
  const double wall = submit({cbs[0]});
  const double one = pool ? read_timestamps(2, warm_query).at(0) : wall;
  const int warm_runs =
      int(std::min<double>(kMaxWarmRuns, std::ceil(options_.warm_up_ms * 1e-3 / std::max(one, 1e-7))));
  const std::vector<VkCommandBuffer> warm(size_t(warm_runs), cbs[0]);
  if (!pool) {                        // no timestamps on this queue: wall clock per submission
    if (!warm.empty()) submit(warm);  // warm_up_ms 0: the untimed run above only
    std::vector<double> times;
    for (int i = 0; i < repeats; ++i) times.push_back(submit({cbs[0]}));
    return times;
  }
  record(cbs[1], 0, repeats, 0);
  std::vector<VkCommandBuffer> list = warm;
  list.push_back(cbs[1]);
  submit(list);
  return read_timestamps(uint32_t(2 * repeats));
}

// ---- gates -----------------------------------------------------------------------------------

void Executor::set_gates(int layer, int64_t n, const std::vector<float>& values, float threshold) {
  const Model& m = model_;
  if (layer < 0 || size_t(layer) >= m.layers().size())
    throw Error("set_gates: layer index " + std::to_string(layer) + " is out of range");
  Kernel& k = m.kernel(layer);
  const int64_t M = k.gate_channels();
  if (M == 0) throw Error("set_gates: layer '" + m.layers()[size_t(layer)].name + "' is not a convolution");
  if (options_.dense_conv)
    throw Error("set_gates: this executor runs the dense conv variant (option conv = \"dense\")");
  if (n < 1 || int64_t(values.size()) != n * M)
    throw Error("set_gates: expected " + std::to_string(n) + " x " + std::to_string(M) +
                " gate values, got " + std::to_string(values.size()));
  refuse_if_device_failed("set_gates");
  device_->fn().vkDeviceWaitIdle(device_->handle());
  auto st = std::make_unique<GateState>();
  const uint64_t vbytes = uint64_t(n * M) * 4, ibytes = uint64_t(n * k.gate_list_length()) * 4,
                 abytes = uint64_t(n) * 12;
  st->buffer = Buffer(*device_, vbytes + ibytes + abytes, kStorageUsage, false, "gates");
  device_->upload(st->buffer, 0, values.data(), vbytes, options_.timeout_s);
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
  model_.kernel(layer).set_gating(nullptr);
  gates_.erase(it);
  if (recording_) recording_->batch = -1;
}

}  // namespace frugal::vk