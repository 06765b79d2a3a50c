#include "folder/plugin_glue.h"

#include <string>

#include "folder/fold.h"
#include "frugal/model/onnx_export.h"
#include "frugal/model/onnx_import.h"
#include "frugal/plugin_sdk.hpp"

namespace frugal::folding {

frugal_status fold_through_abi(PluginMethod method, const void* onnx, size_t onnx_size,
                               const char* options_json, frugal_blob* out_onnx, frugal_blob* out_report_json,
                               frugal_error* err) {
  return sdk::guard(err, [&] {
    if (!onnx || onnx_size == 0) sdk::fail_invalid("fold: no model given (NULL or empty ONNX bytes)");
    if (!out_onnx || !out_report_json) sdk::fail_invalid("fold: output blob pointer is NULL");
    nlohmann::json options;
    if (options_json) {
      try {
        options = nlohmann::json::parse(options_json);
      } catch (const nlohmann::json::exception& e) {
        sdk::fail_invalid(std::string("fold: options are not valid JSON: ") + e.what());
      }
    }
    const FoldOptions parsed = parse_fold_options(options);
    const Graph model = load_onnx_bytes(onnx, onnx_size, "<model given to the folder>");
    const FoldResult r =
        method == PluginMethod::BanOff ? fold_banoff(model, parsed) : fold_naive(model, parsed);
    const std::string bytes = save_onnx_bytes(r.graph);
    const std::string report = r.report.dump();
    frugal_blob model_blob = sdk::make_blob(bytes);
    try {
      *out_report_json = sdk::make_blob(report);
    } catch (...) {
      if (model_blob.release) model_blob.release(model_blob.data);
      throw;
    }
    *out_onnx = model_blob;
  });
}

}  // namespace frugal::folding
