// Predictors in Lua (docs/LUA.md, docs/PREDICTOR.md):
//
//   costs, info = frugal.predict(model, costs_or_nil, {model = FILE, upto = B,
//                                predictor = "xgb", executor = "cpu", threads = T})
//       a cost table for batch 1..B: memory from the executor (exact), times
//       measured where costs_or_nil has them, predicted elsewhere ("source":
//       "predicted"); info = {warnings = {...}, seconds = S, predicted = N, measured = N}
//   info = frugal.train_predictor({{model = m, costs = table}, ...},
//                                 {output = FILE, predictor = "xgb", mode = "forest", seed = 0})
//       trains on the measured entries and writes the predictor file; info is
//       the file's header (without the XGBoost model itself)
#pragma once

#include <lua.hpp>

namespace frugal {

void open_lua_predict(lua_State* L, int module_index);

}  // namespace frugal
