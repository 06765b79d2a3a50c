// The "naive" folder plugin: the baseline that folds a BatchNorm only into an
// expressive layer reached along a chain (no branches, no compensation).
#include "folder/plugin_glue.h"
#include "frugal/plugin_sdk.hpp"

namespace {

frugal_status fold_naive_abi(const void* onnx, size_t onnx_size, const char* options_json,
                             frugal_blob* out_onnx, frugal_blob* out_report_json, frugal_error* err) {
  return frugal::folding::fold_through_abi(frugal::folding::PluginMethod::Naive, onnx, onnx_size,
                                           options_json, out_onnx, out_report_json, err);
}

const frugal_folder_api kNaiveApi = {sizeof(frugal_folder_api), &fold_naive_abi};

}  // namespace

FRUGAL_DEFINE_PLUGIN(FRUGAL_KIND_FOLDER, "naive", "1.0",
                     "naive BatchNorm folding: into the adjacent conv/linear layer along a chain", kNaiveApi)
