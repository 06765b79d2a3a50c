// What both folder plugins do behind the C ABI: ONNX bytes in, folded ONNX
// bytes and the JSON report out, every failure turned into a status + message.
#pragma once

#include "frugal/plugin.h"

namespace frugal::folding {

enum class PluginMethod { BanOff, Naive };

frugal_status fold_through_abi(PluginMethod method, const void* onnx, size_t onnx_size,
                               const char* options_json, frugal_blob* out_onnx, frugal_blob* out_report_json,
                               frugal_error* err);

}  // namespace frugal::folding
