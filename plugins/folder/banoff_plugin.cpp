// The "banoff" folder plugin: every BatchNorm that BaN-OFF's condition allows,
// folded exactly (see docs/FOLDING.md).
#include "folder/plugin_glue.h"
#include "frugal/plugin_sdk.hpp"

namespace {

frugal_status fold_banoff_abi(const void* onnx, size_t onnx_size, const char* options_json,
                              frugal_blob* out_onnx, frugal_blob* out_report_json, frugal_error* err) {
  return frugal::folding::fold_through_abi(frugal::folding::PluginMethod::BanOff, onnx, onnx_size,
                                           options_json, out_onnx, out_report_json, err);
}

const frugal_folder_api kBanOffApi = {sizeof(frugal_folder_api), &fold_banoff_abi};

}  // namespace

FRUGAL_DEFINE_PLUGIN(
    FRUGAL_KIND_FOLDER, "banoff", "1.0",
    "BaN-OFF BatchNorm folding: every BN the necessary and sufficient condition allows, exactly", kBanOffApi)
