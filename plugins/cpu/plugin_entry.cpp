// The C face of the CPU executor: the plugin descriptor and the executor table.
// Every entry point runs inside sdk::guard, so no exception crosses the ABI.
#include "executor.h"
#include "frugal/plugin_sdk.hpp"

struct frugal_executor {
  frugal::cpu::Executor impl;
};

namespace {

using frugal::sdk::guard;

frugal_status cpu_create(const void* onnx, size_t onnx_size, const char* options_json, frugal_executor** out,
                         frugal_error* err) {
  return guard(err, [&] {
    if (!out) frugal::sdk::fail_invalid("create: out is NULL");
    *out = nullptr;
    if (!onnx || onnx_size == 0) frugal::sdk::fail_invalid("create: no model bytes");
    const frugal::cpu::ExecutorOptions options = frugal::cpu::ExecutorOptions::parse(options_json);
    *out = new frugal_executor{frugal::cpu::Executor(onnx, onnx_size, options)};
  });
}

void cpu_destroy(frugal_executor* ex) { delete ex; }

frugal_status cpu_describe(frugal_executor* ex, frugal_blob* out_json, frugal_error* err) {
  return guard(err, [&] {
    if (!ex) frugal::sdk::fail_invalid("describe: executor is NULL");
    frugal::sdk::put_blob(out_json, ex->impl.describe_json());
  });
}

frugal_status cpu_layer_bytes(frugal_executor* ex, int32_t layer, int32_t batch, frugal_layer_bytes* out,
                              frugal_error* err) {
  return guard(err, [&] {
    if (!ex || !out) frugal::sdk::fail_invalid("layer_bytes: executor or out is NULL");
    *out = ex->impl.layer_bytes(layer, batch);
  });
}

frugal_status cpu_set_budget(frugal_executor* ex, uint64_t budget_bytes, frugal_error* err) {
  return guard(err, [&] {
    if (!ex) frugal::sdk::fail_invalid("set_budget: executor is NULL");
    ex->impl.set_budget(budget_bytes);
  });
}

frugal_status cpu_run(frugal_executor* ex, const char* plan_json, const frugal_tensor* inputs,
                      size_t n_inputs, frugal_tensor* outputs, size_t n_outputs, frugal_blob* out_report_json,
                      frugal_error* err) {
  return guard(err, [&] {
    if (!ex) frugal::sdk::fail_invalid("run: executor is NULL");
    if (out_report_json) *out_report_json = frugal_blob{nullptr, 0, nullptr};
    const std::string report = ex->impl.run(plan_json, inputs, n_inputs, outputs, n_outputs);
    if (out_report_json) frugal::sdk::put_blob(out_report_json, report);
  });
}

frugal_status cpu_time_layer(frugal_executor* ex, int32_t layer, int32_t batch, int32_t repeats,
                             double* out_median_seconds, double* out_spread_seconds, frugal_error* err) {
  return guard(err, [&] {
    if (!ex || !out_median_seconds || !out_spread_seconds)
      frugal::sdk::fail_invalid("time_layer: executor or an out pointer is NULL");
    ex->impl.time_layer(layer, batch, repeats, *out_median_seconds, *out_spread_seconds);
  });
}

const frugal_executor_api kCpuExecutorApi = {sizeof(frugal_executor_api),
                                             &cpu_create,
                                             &cpu_destroy,
                                             &cpu_describe,
                                             &cpu_layer_bytes,
                                             &cpu_set_budget,
                                             &cpu_run,
                                             &cpu_time_layer};

}  // namespace

FRUGAL_DEFINE_PLUGIN(
    FRUGAL_KIND_EXECUTOR, "cpu", "0.1.0",
    "Reference CPU executor: im2col + OpenBLAS sgemm, direct depthwise, one arena of exactly the budget",
    kCpuExecutorApi)
