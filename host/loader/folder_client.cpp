#include "loader/folder_client.h"

#include "frugal/model/onnx_export.h"
#include "frugal/model/onnx_import.h"
#include "loader/plugin_call.h"

namespace frugal {

FoldedModel fold_model(const LoadedPlugin& folder, const Graph& model, const nlohmann::json& options) {
  const auto& api = plugin_api<frugal_folder_api>(folder, FRUGAL_KIND_FOLDER);
  const std::string onnx = save_onnx_bytes(model);
  const std::string opts = options.is_null() ? std::string() : options.dump();
  BlobHolder out_model, out_report;
  frugal_error err = fresh_error();
  const int status = api.fold(onnx.data(), onnx.size(), options.is_null() ? nullptr : opts.c_str(),
                              out_model.out(), out_report.out(), &err);
  check_status(folder, status, err, "fold");
  const std::string bytes = blob_bytes(folder, out_model, "folded model", kMaxModelBlobBytes, false);
  FoldedModel result;
  try {
    result.graph = load_onnx_bytes(bytes.data(), bytes.size(), plugin_label(folder) + " folded model");
  } catch (const Error& e) {
    throw Error(plugin_label(folder) + ": returned OK but the folded model is not usable ONNX: " + e.what());
  }
  result.report = blob_json(folder, out_report, "fold report", true, nlohmann::json::object());
  return result;
}

}  // namespace frugal
