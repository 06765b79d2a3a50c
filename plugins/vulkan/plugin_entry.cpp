// The C face of the Vulkan executor: the plugin descriptor and the executor
// table, plus one optional extension symbol for `frugal devices`. Every entry
// point runs inside sdk::guard, so no exception crosses the ABI.
#include "frugal/plugin_sdk.hpp"
#include "vk_executor.h"
#include "vk_instance.h"

struct frugal_executor {
  std::unique_ptr<frugal::vk::Executor> impl;
};

namespace {

using frugal::sdk::guard;

frugal_status vk_create(const void* onnx, size_t onnx_size, const char* options_json, frugal_executor** out,
                        frugal_error* err) {
  return guard(err, [&] {
    if (!out) frugal::sdk::fail_invalid("create: out is NULL");
    *out = nullptr;
    if (!onnx || onnx_size == 0) frugal::sdk::fail_invalid("create: no model bytes");
    const frugal::vk::ExecutorOptions options = frugal::vk::ExecutorOptions::parse(options_json);
    auto ex = std::make_unique<frugal_executor>();
    ex->impl = std::make_unique<frugal::vk::Executor>(onnx, onnx_size, options);
    *out = ex.release();
  });
}

void vk_destroy(frugal_executor* ex) { delete ex; }

frugal_status vk_describe(frugal_executor* ex, frugal_blob* out_json, frugal_error* err) {
  return guard(err, [&] {
    if (!ex) frugal::sdk::fail_invalid("describe: executor is NULL");
    frugal::sdk::put_blob(out_json, ex->impl->describe_json());
  });
}

frugal_status vk_layer_bytes(frugal_executor* ex, int32_t layer, int32_t batch, frugal_layer_bytes* out,
                             frugal_error* err) {
  return guard(err, [&] {
    if (!ex || !out) frugal::sdk::fail_invalid("layer_bytes: executor or out is NULL");
    *out = ex->impl->layer_bytes(layer, batch);
  });
}

frugal_status vk_set_budget(frugal_executor* ex, uint64_t budget_bytes, frugal_error* err) {
  return guard(err, [&] {
    if (!ex) frugal::sdk::fail_invalid("set_budget: executor is NULL");
    ex->impl->set_budget(budget_bytes);
  });
}

frugal_status vk_run(frugal_executor* ex, const char* plan_json, const frugal_tensor* inputs, size_t n_inputs,
                     frugal_tensor* outputs, size_t n_outputs, frugal_blob* out_report_json,
                     frugal_error* err) {
  return guard(err, [&] {
    if (!ex) frugal::sdk::fail_invalid("run: executor is NULL");
    if (out_report_json) *out_report_json = frugal_blob{nullptr, 0, nullptr};
    const std::string report = ex->impl->run(plan_json, inputs, n_inputs, outputs, n_outputs);
    if (out_report_json) frugal::sdk::put_blob(out_report_json, report);
  });
}

frugal_status vk_time_layer(frugal_executor* ex, int32_t layer, int32_t batch, int32_t repeats,
                            double* out_median_seconds, double* out_spread_seconds, frugal_error* err) {
  return guard(err, [&] {
    if (!ex || !out_median_seconds || !out_spread_seconds)
      frugal::sdk::fail_invalid("time_layer: executor or an out pointer is NULL");
    ex->impl->time_layer(layer, batch, repeats, *out_median_seconds, *out_spread_seconds);
  });
}

const frugal_executor_api kVulkanExecutorApi = {sizeof(frugal_executor_api),
                                                &vk_create,
                                                &vk_destroy,
                                                &vk_describe,
                                                &vk_layer_bytes,
                                                &vk_set_budget,
                                                &vk_run,
                                                &vk_time_layer};

}  // namespace

FRUGAL_DEFINE_PLUGIN(
    FRUGAL_KIND_EXECUTOR, "vulkan", "0.1.0",
    "Vulkan compute executor: direct and tiled GLSL shaders (SPIR-V), gating-ready conv, one arena of "
    "exactly the budget; runs on any conformant driver, lavapipe included",
    kVulkanExecutorApi)

// Extension (optional, looked up with dlsym by `frugal devices`): every Vulkan
// device this plugin sees, as JSON
//   {"loader","devices":[{"index","name","type","driver","api_version","heaps":[{"size","budget",...}],...}],
//    "default":N,"validation":bool} or {"error":"..."} when there is no loader, driver or device.
// Never fails for a missing device: that is reported inside the JSON.
extern "C" FRUGAL_EXPORT frugal_status frugal_vulkan_devices_json(frugal_blob* out_json, frugal_error* err) {
  return guard(err, [&] {
    if (!out_json) frugal::sdk::fail_invalid("devices: out_json is NULL");
    frugal::sdk::put_blob(out_json, frugal::vk::describe_devices().dump());
  });
}
