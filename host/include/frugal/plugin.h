/* frugal plugin ABI, version 1.
 *
 * A plugin is a shared object exporting ONE C symbol: `frugal_plugin_entry` for
 * one plugin, or `frugal_plugin_factory` for several plugins in one file (the
 * factory is asked for descriptor 0, 1, ... until it answers NULL; when a file
 * exports both, the factory wins). The host calls it with the ABI version it
 * speaks; the plugin answers with a descriptor (or NULL when it cannot serve that
 * version). Only then does the host look at the kind-specific function table the
 * descriptor points to. Every table, the descriptor included, starts with its own
 * size so that later versions can append fields; the host reads an appended field
 * only when the size says it is there.
 *
 * Optional features beyond a kind's table are extensions, asked for by id through
 * the descriptor's `get_extension` (in the spirit of CLAP's get_extension): a
 * plugin answers NULL for ids it does not know, and each extension struct starts
 * with its own size too.
 *
 * Only C types and opaque handles cross the boundary. Structured data travels as
 * UTF-8 JSON text (cost tables, plans, options, reports) or as serialized ONNX
 * bytes (models), so a plugin may be written in any language against any ONNX
 * library. Tensors travel as `frugal_tensor` views of caller-owned memory.
 *
 * Errors: every function that can fail returns a `frugal_status`; on failure it
 * writes a NUL-terminated message into the caller's `frugal_error` buffer. Nothing
 * may throw across this boundary.
 *
 * Ownership:
 *   - Pointers passed IN are borrowed for the duration of the call only.
 *   - Buffers passed OUT are `frugal_blob`s allocated by the plugin; the host calls
 *     blob.release(blob.data) exactly once when done, whether the call succeeded or
 *     failed (release may be NULL for static data; it is not called when data is
 *     NULL). A blob left untouched ({NULL, 0, NULL}) is an empty answer.
 *   - Input tensors are read-only for the plugin even though `frugal_tensor::data`
 *     is not const (one struct serves both directions); output tensors are
 *     allocated by the caller with the right shapes.
 *   - Handles (`frugal_executor*`) are created by the plugin and destroyed by the
 *     host through the same table's `destroy`.
 *   - The descriptor and tables are static data of the plugin; they stay valid until
 *     the host unloads the shared object.
 */
#ifndef FRUGAL_PLUGIN_H
#define FRUGAL_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FRUGAL_ABI_VERSION 1u
#define FRUGAL_ENTRY_SYMBOL "frugal_plugin_entry"

#if defined(__GNUC__)
#define FRUGAL_EXPORT __attribute__((visibility("default")))
#else
#define FRUGAL_EXPORT
#endif

typedef enum frugal_kind {
  FRUGAL_KIND_FOLDER = 1,
  FRUGAL_KIND_PREDICTOR = 2,
  FRUGAL_KIND_PLANNER = 3,
  FRUGAL_KIND_EXECUTOR = 4
} frugal_kind;

typedef enum frugal_status {
  FRUGAL_OK = 0,
  FRUGAL_ERR_INVALID_ARGUMENT = 1, /* bad options, malformed JSON/ONNX, bad shapes */
  FRUGAL_ERR_UNSUPPORTED = 2,      /* op / dtype / feature this plugin lacks */
  FRUGAL_ERR_OUT_OF_MEMORY = 3,    /* host or device allocation failed */
  FRUGAL_ERR_BUDGET = 4,           /* does not fit the memory budget */
  FRUGAL_ERR_DEVICE = 5,           /* device missing, lost, or failing */
  FRUGAL_ERR_INTERNAL = 6
} frugal_status;

#define FRUGAL_ERROR_CAPACITY 2048
typedef struct frugal_error {
  char message[FRUGAL_ERROR_CAPACITY]; /* NUL-terminated, written by the plugin */
} frugal_error;

typedef struct frugal_blob {
  void* data;
  size_t size;
  void (*release)(void* data); /* called once by the receiver; may be NULL */
} frugal_blob;

/* Element types: values of ONNX TensorProto.DataType. */
typedef enum frugal_dtype { FRUGAL_DTYPE_FLOAT32 = 1, FRUGAL_DTYPE_INT64 = 7 } frugal_dtype;

/* A view of a dense, C-ordered tensor in caller-owned memory. */
typedef struct frugal_tensor {
  const char* name;
  int32_t dtype; /* frugal_dtype */
  int32_t rank;
  const int64_t* dims;
  void* data;
  size_t bytes; /* size of data in bytes (checked by the receiver) */
} frugal_tensor;

/* ---- folder ---------------------------------------------------------------
 * fold: takes a serialized ONNX model, returns the folded model (ONNX bytes) and
 * a JSON report {"bn_total":N,"bn_folded":N,"nodes":[{"name","folded","direction",
 * "into":[...],"reason"}...]}. options_json may be NULL. */
typedef struct frugal_folder_api {
  size_t struct_size;
  frugal_status (*fold)(const void* onnx, size_t onnx_size, const char* options_json, frugal_blob* out_onnx,
                        frugal_blob* out_report_json, frugal_error* err);
} frugal_folder_api;

/* ---- planner --------------------------------------------------------------
 * plan: takes a cost table (JSON, see docs/COSTS.md) and options
 * {"budget_bytes":N,"batch":B,"unit_bytes":U,...}, returns a plan (JSON, see
 * docs/PLAN.md). */
typedef struct frugal_planner_api {
  size_t struct_size;
  frugal_status (*plan)(const char* costs_json, const char* options_json, frugal_blob* out_plan_json,
                        frugal_error* err);
} frugal_planner_api;

/* ---- predictor ------------------------------------------------------------
 * predict: takes the model (ONNX bytes), a cost table with some measured entries
 * and options {"upto":B}; returns the cost table with every entry for batch sizes
 * 1..upto filled, each marked "measured" or "predicted".
 *
 * train (appended; a table of FRUGAL_PREDICTOR_API_BASE_SIZE bytes has none, so
 * callers check struct_size first): n examples, each a model (ONNX bytes) and
 * its cost table with measured times, and options (plugin-defined, may be
 * NULL); returns the trained predictor as one file's bytes (which predict's
 * options then name). */
typedef struct frugal_predictor_api {
  size_t struct_size;
  frugal_status (*predict)(const void* onnx, size_t onnx_size, const char* costs_json,
                           const char* options_json, frugal_blob* out_costs_json, frugal_error* err);
  frugal_status (*train)(size_t n, const void* const* onnx, const size_t* onnx_sizes,
                         const char* const* costs_json, const char* options_json, frugal_blob* out_predictor,
                         frugal_error* err);
} frugal_predictor_api;
/* The size of a predictor table without train: the least the host accepts. */
#define FRUGAL_PREDICTOR_API_BASE_SIZE (offsetof(frugal_predictor_api, train))

/* ---- executor -------------------------------------------------------------
 * An executor instance holds one model, prepared for running, and one arena.
 * Layers are the executor's schedulable units (a conv with the BN/ReLU that run
 * in place after it counts as one layer), listed by describe(). */
typedef struct frugal_executor frugal_executor; /* opaque */

typedef struct frugal_layer_bytes {
  uint64_t in_bytes;  /* input activations read by the layer at this batch */
  uint64_t out_bytes; /* output activations written */
  uint64_t ws_bytes;  /* workspace (im2col, gathered weights, ...) */
} frugal_layer_bytes;

typedef struct frugal_executor_api {
  size_t struct_size;
  /* options_json: {"threads":T,"device":N,...}; may be NULL. */
  frugal_status (*create)(const void* onnx, size_t onnx_size, const char* options_json, frugal_executor** out,
                          frugal_error* err);
  void (*destroy)(frugal_executor* ex);
  /* JSON {"device":"...","layers":[{"name":..,"inputs":[..],"ops":[..],
   *  "macs_per_sample":N}...],"inputs":[{"name","shape"}],"outputs":[...]} */
  frugal_status (*describe)(frugal_executor* ex, frugal_blob* out_json, frugal_error* err);
  /* Bytes layer `layer` (index into describe's list) really uses at `batch`. */
  frugal_status (*layer_bytes)(frugal_executor* ex, int32_t layer, int32_t batch, frugal_layer_bytes* out,
                               frugal_error* err);
  /* Allocates (or re-allocates) the arena of exactly budget_bytes. */
  frugal_status (*set_budget)(frugal_executor* ex, uint64_t budget_bytes, frugal_error* err);
  /* Runs the graph on the inputs. plan_json NULL: the executor's own schedule
   * of the whole batch (layer by layer on all samples, unless its options say
   * otherwise: the cpu executor's "schedule"). Otherwise the plan's steps in order. Outputs are
   * caller-allocated with the right shapes (float32; a bool output is written as 0 and 1). Refuses
   * (FRUGAL_ERR_BUDGET) before running anything that would not fit.
   * report_json (may be NULL): {"peak_bytes":N,"seconds":S,
   * "steps":[{"layer","first","count","seconds"}]}. */
  frugal_status (*run)(frugal_executor* ex, const char* plan_json, const frugal_tensor* inputs,
                       size_t n_inputs, frugal_tensor* outputs, size_t n_outputs,
                       frugal_blob* out_report_json, frugal_error* err);
  /* Times layer `layer` at `batch` (per-batch seconds; median of `repeats` after a
   * warm-up), on synthetic data inside the arena. */
  frugal_status (*time_layer)(frugal_executor* ex, int32_t layer, int32_t batch, int32_t repeats,
                              double* out_median_seconds, double* out_spread_seconds, frugal_error* err);
} frugal_executor_api;

/* ---- the entry point ------------------------------------------------------ */
typedef struct frugal_plugin_descriptor {
  size_t struct_size;
  uint32_t abi_version; /* FRUGAL_ABI_VERSION the plugin was built against */
  int32_t kind;         /* frugal_kind */
  const char* name;     /* short, unique per kind: "cpu", "banoff", "vbs" */
  const char* version;  /* plugin's own version string */
  const char* description;
  const void* api; /* frugal_<kind>_api*, starting with its struct_size */
  /* Appended: may be NULL, or absent in a smaller descriptor. The extension
   * struct for `id` (a FRUGAL_EXT_* string), or NULL when not offered. */
  const void* (*get_extension)(const char* id);
} frugal_plugin_descriptor;

/* The descriptor's fields every ABI-1 plugin has (get_extension came later). */
#define FRUGAL_DESCRIPTOR_BASE_SIZE offsetof(frugal_plugin_descriptor, get_extension)

typedef const frugal_plugin_descriptor* (*frugal_plugin_entry_fn)(uint32_t host_abi_version);

/* Several plugins in one shared object: descriptor `index` (0, 1, ...), NULL
 * past the last one or when the plugin cannot serve host_abi_version. */
#define FRUGAL_FACTORY_SYMBOL "frugal_plugin_factory"
typedef const frugal_plugin_descriptor* (*frugal_plugin_factory_fn)(uint32_t host_abi_version,
                                                                    uint32_t index);

/* ---- extensions ------------------------------------------------------------
 * "frugal.devices/1", offered by executors that can choose among devices:
 * devices_json lists them as JSON {"devices":[{"index","name","type",...}],
 * "default":N,...} or {"error":"..."} when there is no driver or device (that is
 * not a failure of the call). */
#define FRUGAL_EXT_DEVICES "frugal.devices/1"
typedef struct frugal_devices_extension {
  size_t struct_size;
  frugal_status (*devices_json)(frugal_blob* out_json, frugal_error* err);
} frugal_devices_extension;

/* "frugal.placement/1", offered by executors whose arena compacts: where a plan's
 * tensors would lie, without running it, and what moving arena bytes costs, so
 * that the host can price the moves a plan causes (docs/COSTS.md, "Moves").
 *   place: plan_json (NULL: what run does without a plan) for a request
 *     of `batch` samples in an arena of capacity_bytes (0: exactly the plan's
 *     peak). out_json: {"peak_bytes":N,"moved_bytes":N,"compactions":N}, the same
 *     moves `run` makes with that plan and budget. Refuses (FRUGAL_ERR_BUDGET)
 *     a plan that does not fit.
 *   time_move: median seconds PER BYTE moved in an arena of capacity_bytes, the
 *     way its compactions move (`repeats` timed moves after a warm-up; on the
 *     CPU a slide of three quarters of the block: a small arena moves at the
 *     cache's speed, a large one at memory's). */
#define FRUGAL_EXT_PLACEMENT "frugal.placement/1"
typedef struct frugal_placement_extension {
  size_t struct_size;
  frugal_status (*place)(frugal_executor* ex, const char* plan_json, int32_t batch, uint64_t capacity_bytes,
                         frugal_blob* out_json, frugal_error* err);
  frugal_status (*time_move)(frugal_executor* ex, uint64_t capacity_bytes, int32_t repeats,
                             double* out_seconds_per_byte, frugal_error* err);
} frugal_placement_extension;

/* "frugal.host-weights/1", offered by executors whose `create` reads weights
 * from the host's memory: the host then writes each initializer of 4 KiB or more
 * as ONNX external data with location "*frugal-host-memory*", "offset" the
 * decimal address of its bytes in this process and "length" their count, valid
 * until `create` returns (the plugin copies or repacks what it keeps). So a
 * model's weights are not serialized, copied and parsed once more on their way
 * in; without the extension every initializer is inline raw_data. A plugin must
 * honour the location only in the bytes that `create` receives.
 *
 * create_releasing (appended; a struct of FRUGAL_HOST_WEIGHTS_EXT_BASE_SIZE
 * bytes has none, so hosts check struct_size, and NULL, first): `create` for a
 * host that gives its model away, so that the host's copy of the weights
 * shrinks while the plugin's grows instead of outliving it. The plugin calls
 * done(host, address) at most once for each host-memory reference ("offset"
 * its address), as soon as it no longer reads those bytes, on the thread that
 * called create_releasing and before it returns; the host may free them at
 * once. References not reported stay valid until create_releasing returns.
 * `host` is the host's, passed back unchanged; done is never NULL (a host that
 * keeps its model calls `create`). */
#define FRUGAL_EXT_HOST_WEIGHTS "frugal.host-weights/1"
typedef void (*frugal_weight_done_fn)(void* host, uint64_t address);
typedef struct frugal_host_weights_extension {
  size_t struct_size;
  frugal_status (*create_releasing)(const void* onnx, size_t onnx_size, const char* options_json,
                                    frugal_weight_done_fn done, void* host, frugal_executor** out,
                                    frugal_error* err);
} frugal_host_weights_extension;
/* The size of the extension without create_releasing: weights by address only. */
#define FRUGAL_HOST_WEIGHTS_EXT_BASE_SIZE (offsetof(frugal_host_weights_extension, create_releasing))

#ifdef __cplusplus
}
#endif

#endif /* FRUGAL_PLUGIN_H */
