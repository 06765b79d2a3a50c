// BatchNorm folding in Lua:
//
//   folded, report = frugal.fold(model, {method = "banoff" | "naive", options = {...}})
//
// method: a folder plugin's name (default "banoff", the BaN-OFF folder;
// "naive" folds a BN only into the conv/Gemm right before it). options: passed
// to the plugin as JSON (e.g. {allow_forward = false}). The folded model is a
// new frugal.Model (the input is untouched); report is the plugin's:
//   {method=, bn_total=, bn_folded=, parameters_before=, parameters_after=,
//    nodes = {{name=, folded=, direction = "backward"|"forward"|"none",
//              into = {...}, compensated = {...}, reason=}, ...}}
#pragma once

#include <lua.hpp>

namespace frugal {

void open_lua_fold(lua_State* L, int module_index);

}  // namespace frugal
