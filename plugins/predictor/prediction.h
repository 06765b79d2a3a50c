// Prediction: a cost table whose layers carry the executor's facts and exact
// bytes for batch 1..upto gets every time that was not measured from the
// model, marked "predicted"; measured entries stay. Warnings (in the table's
// "warnings") name layers whose features lie outside the training range.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "frugal/model/graph.h"
#include "predictor_file.h"

namespace frugal::predictor {

// `file` is read_predictor_file()'s result; `origin` names it in messages.
// Throws Error for a file trained elsewhere, a layer family it never saw, or a
// table whose byte lists are shorter than upto.
nlohmann::json predict_table(const PredictorFile& file, const std::string& origin, Graph model,
                             nlohmann::json costs, int upto);

}  // namespace frugal::predictor
