#include "loader/predictor_client.h"

#include "frugal/model/onnx_export.h"
#include "loader/plugin_call.h"

namespace frugal {

nlohmann::json predict_costs(const LoadedPlugin& predictor, const Graph& model, const nlohmann::json& costs,
                             const nlohmann::json& options) {
  const auto& api = plugin_api<frugal_predictor_api>(predictor, FRUGAL_KIND_PREDICTOR);
  const std::string onnx = save_onnx_bytes(model);
  const std::string costs_text = costs.dump();
  const std::string options_text = options.is_null() ? std::string("{}") : options.dump();
  BlobHolder out;
  frugal_error err = fresh_error();
  const int status =
      api.predict(onnx.data(), onnx.size(), costs_text.c_str(), options_text.c_str(), out.out(), &err);
  check_status(predictor, status, err, "predict");
  nlohmann::json table = blob_json(predictor, out, "cost table", false);
  if (!table.is_object())
    throw Error(plugin_label(predictor) + ": returned OK but the cost table is a JSON " +
                std::string(table.type_name()) + ", not an object");
  return table;
}

}  // namespace frugal
