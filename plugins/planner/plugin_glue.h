// The C side of the planner plugins: one function that turns the C call into a
// run_planner() call, catches every exception, and hands the plan out as a blob.
#pragma once

#include "frugal/plugin.h"

namespace frugal::planner {

frugal_status plan_entry(const char* planner, const char* costs_json, const char* options_json,
                         frugal_blob* out_plan_json, frugal_error* err);

}  // namespace frugal::planner

// Defines the plugin's one exported symbol for planner `NAME` (a string literal).
#define FRUGAL_PLANNER_PLUGIN(IDENT, NAME, DESCRIPTION)                                                     \
  namespace {                                                                                               \
  frugal_status IDENT##_plan(const char* costs, const char* options, frugal_blob* out, frugal_error* err) { \
    return frugal::planner::plan_entry(NAME, costs, options, out, err);                                     \
  }                                                                                                         \
  const frugal_planner_api IDENT##_api = {sizeof(frugal_planner_api), &IDENT##_plan};                       \
  const frugal_plugin_descriptor IDENT##_descriptor = {sizeof(frugal_plugin_descriptor),                    \
                                                       FRUGAL_ABI_VERSION,                                  \
                                                       FRUGAL_KIND_PLANNER,                                 \
                                                       NAME,                                                \
                                                       "0.1.0",                                             \
                                                       DESCRIPTION,                                         \
                                                       &IDENT##_api};                                       \
  }                                                                                                         \
  extern "C" FRUGAL_EXPORT const frugal_plugin_descriptor* frugal_plugin_entry(uint32_t host_abi_version) { \
    return host_abi_version == FRUGAL_ABI_VERSION ? &IDENT##_descriptor : nullptr;                          \
  }
