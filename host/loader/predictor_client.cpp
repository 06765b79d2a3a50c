#include "loader/predictor_client.h"

#include <cstddef>

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

namespace {

const frugal_predictor_api& trainable_api(const LoadedPlugin& predictor) {
  const auto& api = plugin_api<frugal_predictor_api>(predictor, FRUGAL_KIND_PREDICTOR);
  if (api.struct_size < offsetof(frugal_predictor_api, train) + sizeof(api.train) || !api.train)
    throw Error(plugin_label(predictor) +
                ": this predictor cannot be trained (its table has no train function)");
  return api;
}

}  // namespace

std::string train_predictor(const LoadedPlugin& predictor, const std::vector<TrainingExample>& examples,
                            const nlohmann::json& options) {
  const auto& api = trainable_api(predictor);
  std::vector<std::string> onnx, costs;
  for (const TrainingExample& e : examples) {
    onnx.push_back(save_onnx_bytes(*e.model));
    costs.push_back(e.costs.dump());
  }
  std::vector<const void*> onnx_ptr;
  std::vector<size_t> onnx_size;
  std::vector<const char*> costs_ptr;
  for (size_t i = 0; i < examples.size(); ++i) {
    onnx_ptr.push_back(onnx[i].data());
    onnx_size.push_back(onnx[i].size());
    costs_ptr.push_back(costs[i].c_str());
  }
  const std::string options_text = options.is_null() ? std::string("{}") : options.dump();
  BlobHolder out;
  frugal_error err = fresh_error();
  const int status = api.train(examples.size(), onnx_ptr.data(), onnx_size.data(), costs_ptr.data(),
                               options_text.c_str(), out.out(), &err);
  check_status(predictor, status, err, "train");
  return blob_bytes(predictor, out, "predictor", kMaxJsonBlobBytes, false);
}

}  // namespace frugal
