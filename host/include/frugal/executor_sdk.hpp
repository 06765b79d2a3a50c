// frugal executor SDK: the C face of an executor plugin, generated from a C++
// class, so that no executor writes the seven ABI wrappers again.
//
// `Impl` must provide
//   Impl(const void* onnx, size_t size, const char* options_json);   // options_json may be NULL
//   std::string describe_json();
//   frugal_layer_bytes layer_bytes(int32_t layer, int32_t batch);
//   void set_budget(uint64_t budget_bytes);
//   std::string run(const char* plan_json, const frugal_tensor* in, size_t n_in,
//                   frugal_tensor* out, size_t n_out);                 // returns the report JSON
//   void time_layer(int32_t layer, int32_t batch, int32_t repeats, double& median, double& spread);
// and may throw anything: every entry point runs inside sdk::guard.
// An executor whose arena compacts may also offer FRUGAL_EXT_PLACEMENT
// (placement_extension<Impl>(), returned from the descriptor's get_extension);
// then Impl also provides
//   std::string place_json(const char* plan_json, int32_t batch, uint64_t capacity_bytes);
//   double time_move(uint64_t capacity_bytes, int32_t repeats);        // median seconds per byte
// One that reads its model with load_onnx_bytes(..., host_memory = true) offers
// FRUGAL_EXT_HOST_WEIGHTS too (host_weights_extension()): weights then come by
// address. With host_weights_extension<Impl>() it also offers create_releasing,
// and Impl provides
//   Impl(const void* onnx, size_t size, const char* options_json, const WeightDone& done);
// passing `done` on to load_onnx_bytes(..., true, done) (or calling it itself
// for each weight it has read), so that the host frees its copy meanwhile.
//
//   FRUGAL_DEFINE_PLUGIN(FRUGAL_KIND_EXECUTOR, "mine", "1.0", "my executor",
//                        frugal::sdk::executor_api<MyExecutor>())
#ifndef FRUGAL_EXECUTOR_SDK_HPP
#define FRUGAL_EXECUTOR_SDK_HPP

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "plugin_sdk.hpp"

// The opaque handle of the C ABI: one per executor plugin's shared object (each
// plugin is its own shared object, loaded RTLD_LOCAL), holding the C++ object.
struct frugal_executor {
  std::shared_ptr<void> impl;
};

namespace frugal {
namespace sdk {

template <class Impl>
struct ExecutorEntry {
  static Impl& self(frugal_executor* ex, const char* fn) {
    if (!ex || !ex->impl) fail_invalid(std::string(fn) + ": executor is NULL");
    return *static_cast<Impl*>(ex->impl.get());
  }
  static frugal_status create(const void* onnx, size_t size, const char* options, frugal_executor** out,
                              frugal_error* err) {
    return guard(err, [&] {
      if (!out) fail_invalid("create: out is NULL");
      *out = nullptr;
      if (!onnx || size == 0) fail_invalid("create: no model bytes");
      *out = new frugal_executor{std::make_shared<Impl>(onnx, size, options)};
    });
  }
  static void destroy(frugal_executor* ex) { delete ex; }
  static frugal_status describe(frugal_executor* ex, frugal_blob* out_json, frugal_error* err) {
    return guard(err, [&] { put_blob(out_json, self(ex, "describe").describe_json()); });
  }
  static frugal_status layer_bytes(frugal_executor* ex, int32_t layer, int32_t batch, frugal_layer_bytes* out,
                                   frugal_error* err) {
    return guard(err, [&] {
      if (!out) fail_invalid("layer_bytes: out is NULL");
      *out = self(ex, "layer_bytes").layer_bytes(layer, batch);
    });
  }
  static frugal_status set_budget(frugal_executor* ex, uint64_t budget_bytes, frugal_error* err) {
    return guard(err, [&] { self(ex, "set_budget").set_budget(budget_bytes); });
  }
  static frugal_status run(frugal_executor* ex, const char* plan_json, const frugal_tensor* inputs,
                           size_t n_inputs, frugal_tensor* outputs, size_t n_outputs, frugal_blob* out_report,
                           frugal_error* err) {
    return guard(err, [&] {
      Impl& impl = self(ex, "run");
      if (out_report) *out_report = frugal_blob{nullptr, 0, nullptr};
      const std::string report = impl.run(plan_json, inputs, n_inputs, outputs, n_outputs);
      if (out_report) put_blob(out_report, report);
    });
  }
  static frugal_status time_layer(frugal_executor* ex, int32_t layer, int32_t batch, int32_t repeats,
                                  double* out_median, double* out_spread, frugal_error* err) {
    return guard(err, [&] {
      Impl& impl = self(ex, "time_layer");
      if (!out_median || !out_spread) fail_invalid("time_layer: an out pointer is NULL");
      impl.time_layer(layer, batch, repeats, *out_median, *out_spread);
    });
  }
};

// The executor table for Impl (a static object: valid while the plugin is loaded).
template <class Impl>
const frugal_executor_api& executor_api() {
  using E = ExecutorEntry<Impl>;
  static const frugal_executor_api api = {sizeof(frugal_executor_api),
                                          &E::create,
                                          &E::destroy,
                                          &E::describe,
                                          &E::layer_bytes,
                                          &E::set_budget,
                                          &E::run,
                                          &E::time_layer};
  return api;
}

// FRUGAL_EXT_PLACEMENT for Impl (plugin.h): the same handle as the executor table's.
template <class Impl>
struct PlacementEntry {
  static frugal_status place(frugal_executor* ex, const char* plan_json, int32_t batch, uint64_t capacity,
                             frugal_blob* out_json, frugal_error* err) {
    return guard(err, [&] {
      if (!out_json) fail_invalid("place: out_json is NULL");
      *out_json = frugal_blob{nullptr, 0, nullptr};
      if (batch < 1) fail_invalid("place: batch must be >= 1, got " + std::to_string(batch));
      put_blob(out_json, ExecutorEntry<Impl>::self(ex, "place").place_json(plan_json, batch, capacity));
    });
  }
  static frugal_status time_move(frugal_executor* ex, uint64_t capacity, int32_t repeats,
                                 double* out_per_byte, frugal_error* err) {
    return guard(err, [&] {
      if (!out_per_byte) fail_invalid("time_move: out_seconds_per_byte is NULL");
      if (repeats < 1) fail_invalid("time_move: repeats must be >= 1, got " + std::to_string(repeats));
      if (capacity < 4096)
        fail_invalid("time_move: capacity_bytes must be >= 4096, got " + std::to_string(capacity));
      *out_per_byte = ExecutorEntry<Impl>::self(ex, "time_move").time_move(capacity, repeats);
    });
  }
};

template <class Impl>
const frugal_placement_extension& placement_extension() {
  using E = PlacementEntry<Impl>;
  static const frugal_placement_extension ext = {sizeof(frugal_placement_extension), &E::place,
                                                 &E::time_move};
  return ext;
}

// FRUGAL_EXT_HOST_WEIGHTS (plugin.h): offered by an executor whose create reads
// its model with frugal::load_onnx_bytes(..., host_memory = true). This one has
// no create_releasing: the host keeps its weights until create returns.
inline const frugal_host_weights_extension& host_weights_extension() {
  static const frugal_host_weights_extension ext = {FRUGAL_HOST_WEIGHTS_EXT_BASE_SIZE, nullptr};
  return ext;
}

// The host's done callback of create_releasing, as Impl's constructor receives
// it: done(address) tells the host it may free that weight's bytes.
using WeightDone = std::function<void(uint64_t address)>;

template <class Impl>
struct HostWeightsEntry {
  static frugal_status create_releasing(const void* onnx, size_t size, const char* options,
                                        frugal_weight_done_fn done, void* host, frugal_executor** out,
                                        frugal_error* err) {
    return guard(err, [&] {
      if (!out) fail_invalid("create_releasing: out is NULL");
      *out = nullptr;
      if (!onnx || size == 0) fail_invalid("create_releasing: no model bytes");
      if (!done) fail_invalid("create_releasing: done is NULL");
      const WeightDone tell = [done, host](uint64_t address) { done(host, address); };
      *out = new frugal_executor{std::make_shared<Impl>(onnx, size, options, tell)};
    });
  }
};

// The same extension with create_releasing, for an Impl that takes `done` (above).
template <class Impl>
const frugal_host_weights_extension& host_weights_extension() {
  static const frugal_host_weights_extension ext = {sizeof(frugal_host_weights_extension),
                                                    &HostWeightsEntry<Impl>::create_releasing};
  return ext;
}

}  // namespace sdk
}  // namespace frugal

#endif  // FRUGAL_EXECUTOR_SDK_HPP
