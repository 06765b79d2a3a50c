#include "executor_plugin.h"

#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <random>

#include "frugal/model/onnx_export.h"
#include "loader/plugin_registry.h"

namespace exec_test {

namespace {

Status status_of(frugal_status code, const frugal_error& err) {
  Status s;
  s.code = code;
  if (code != FRUGAL_OK) s.message = err.message;
  return s;
}

std::string take_blob(frugal_blob& b) {
  std::string s(static_cast<const char*>(b.data), b.size);
  if (b.release) b.release(b.data);
  return s;
}

}  // namespace

const frugal::LoadedPlugin& executor_plugin(const std::string& name) {
  static frugal::PluginRegistry registry;
  static std::map<std::string, const frugal::LoadedPlugin*> loaded;
  auto it = loaded.find(name);
  if (it != loaded.end()) return *it->second;
  std::string why;
  const frugal::LoadedPlugin* p =
      registry.load_file(std::string(FRUGAL_TEST_BINARY_DIR) + "/plugins/" + name + ".so", &why);
  if (!p) FAIL("cannot load the " << name << " plugin: " << why);
  REQUIRE(p->kind == FRUGAL_KIND_EXECUTOR);
  REQUIRE(p->name == name);
  loaded[name] = p;
  return *p;
}

const frugal_executor_api& executor_api(const std::string& name) {
  return *static_cast<const frugal_executor_api*>(executor_plugin(name).api);
}

const frugal_placement_extension& placement_extension(const std::string& name) {
  const void* ext = executor_plugin(name).extension(FRUGAL_EXT_PLACEMENT, sizeof(frugal_placement_extension));
  if (!ext) FAIL("the " << name << " plugin does not offer " FRUGAL_EXT_PLACEMENT);
  return *static_cast<const frugal_placement_extension*>(ext);
}

const frugal_host_weights_extension& host_weights_extension(const std::string& name) {
  const void* ext =
      executor_plugin(name).extension(FRUGAL_EXT_HOST_WEIGHTS, sizeof(frugal_host_weights_extension));
  const auto* hw = static_cast<const frugal_host_weights_extension*>(ext);
  if (!hw || !hw->create_releasing)
    FAIL("the " << name << " plugin does not offer " FRUGAL_EXT_HOST_WEIGHTS " with create_releasing");
  return *hw;
}

PluginExecutor::PluginExecutor(const frugal_executor_api& api, const std::string& onnx_bytes,
                               const std::string& options_json)
    : api_(api) {
  frugal_error err{};
  created = status_of(api_.create(onnx_bytes.data(), onnx_bytes.size(),
                                  options_json.empty() ? nullptr : options_json.c_str(), &handle_, &err),
                      err);
  if (!created.ok()) handle_ = nullptr;
}

PluginExecutor::PluginExecutor(const frugal_executor_api& api, const frugal::Graph& g,
                               const std::string& options_json)
    : PluginExecutor(api, frugal::save_onnx_bytes(g), options_json) {}

PluginExecutor::~PluginExecutor() {
  if (handle_) api_.destroy(handle_);
}

nlohmann::json PluginExecutor::describe() const {
  frugal_error err{};
  frugal_blob b{nullptr, 0, nullptr};
  const frugal_status st = api_.describe(handle_, &b, &err);
  REQUIRE(st == FRUGAL_OK);
  return nlohmann::json::parse(take_blob(b));
}

frugal_layer_bytes PluginExecutor::layer_bytes(int layer, int batch) const {
  frugal_error err{};
  frugal_layer_bytes out{};
  const frugal_status st = api_.layer_bytes(handle_, layer, batch, &out, &err);
  INFO(err.message);
  REQUIRE(st == FRUGAL_OK);
  return out;
}

Status PluginExecutor::set_budget(uint64_t bytes) {
  frugal_error err{};
  return status_of(api_.set_budget(handle_, bytes, &err), err);
}

Status PluginExecutor::run(const std::vector<HostTensor>& inputs, std::vector<HostTensor>& outputs,
                           const nlohmann::json& plan, nlohmann::json* report) {
  if (outputs.empty()) {
    const nlohmann::json d = describe();
    const int64_t batch = inputs.empty() || inputs[0].dims.empty() ? 1 : inputs[0].dims[0];
    for (const auto& o : d["outputs"]) {
      HostTensor t;
      t.name = o["name"].get<std::string>();
      t.dims = o["shape"].get<std::vector<int64_t>>();
      if (d["batched"].get<bool>() && !t.dims.empty()) t.dims[0] = batch;
      outputs.push_back(t);
    }
  }
  std::vector<frugal_tensor> in, out;
  for (const HostTensor& t : inputs)
    in.push_back(frugal_tensor{t.name.c_str(), FRUGAL_DTYPE_FLOAT32, int32_t(t.dims.size()), t.dims.data(),
                               const_cast<float*>(t.data.data()), t.data.size() * sizeof(float)});
  for (HostTensor& t : outputs) {
    int64_t n = 1;
    for (int64_t d : t.dims) n *= d;
    t.data.assign(size_t(n), std::nanf(""));
    out.push_back(frugal_tensor{t.name.c_str(), FRUGAL_DTYPE_FLOAT32, int32_t(t.dims.size()), t.dims.data(),
                                t.data.data(), t.data.size() * sizeof(float)});
  }
  frugal_error err{};
  frugal_blob b{nullptr, 0, nullptr};
  const std::string plan_text = plan.is_null() ? std::string() : plan.dump();
  const frugal_status st = api_.run(handle_, plan.is_null() ? nullptr : plan_text.c_str(), in.data(),
                                    in.size(), out.data(), out.size(), &b, &err);
  if (st == FRUGAL_OK) {
    const std::string text = take_blob(b);
    if (report) *report = nlohmann::json::parse(text);
  }
  return status_of(st, err);
}

Status PluginExecutor::time_layer(int layer, int batch, int repeats, double& median, double& spread) {
  frugal_error err{};
  return status_of(api_.time_layer(handle_, layer, batch, repeats, &median, &spread, &err), err);
}

Status PluginExecutor::place(const frugal_placement_extension& ext, const nlohmann::json& plan, int32_t batch,
                             uint64_t capacity, nlohmann::json* placed) {
  frugal_error err{};
  frugal_blob out{nullptr, 0, nullptr};
  const std::string text = plan.is_null() ? std::string() : plan.dump();
  const Status st = status_of(
      ext.place(handle_, plan.is_null() ? nullptr : text.c_str(), batch, capacity, &out, &err), err);
  const std::string json = out.data ? take_blob(out) : std::string();
  if (placed) *placed = st.ok() ? nlohmann::json::parse(json) : nlohmann::json();
  return st;
}

std::vector<float> random_floats(size_t n, uint64_t seed, float lo, float hi) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> u(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

std::vector<HostTensor> random_inputs(const nlohmann::json& describe, int64_t batch, uint64_t seed) {
  std::vector<HostTensor> v;
  for (const auto& in : describe["inputs"]) {
    HostTensor t;
    t.name = in["name"].get<std::string>();
    t.dims = in["shape"].get<std::vector<int64_t>>();
    t.dims[0] = batch;
    int64_t n = 1;
    for (int64_t x : t.dims) n *= x;
    t.data = random_floats(size_t(n), seed++);
    v.push_back(t);
  }
  return v;
}

}  // namespace exec_test
