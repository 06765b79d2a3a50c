#include "plugin_glue.h"

#include <cstdlib>
#include <cstring>
#include <exception>
#include <new>
#include <string>

#include "planners.h"

namespace frugal::planner {

namespace {

void set_error(frugal_error* err, const std::string& msg) {
  if (!err) return;
  const size_t n = std::min(msg.size(), sizeof(err->message) - 1);
  std::memcpy(err->message, msg.data(), n);
  err->message[n] = '\0';
}

}  // namespace

frugal_status plan_entry(const char* planner, const char* costs_json, const char* options_json,
                         frugal_blob* out_plan_json, frugal_error* err) {
  if (!costs_json || !out_plan_json) {
    set_error(err, std::string(planner) + ": costs_json and out_plan_json must not be NULL");
    return FRUGAL_ERR_INVALID_ARGUMENT;
  }
  try {
    const std::string text = run_planner(planner, costs_json, options_json ? options_json : "").dump();
    char* data = static_cast<char*>(std::malloc(text.size() + 1));
    if (!data) throw std::bad_alloc();
    std::memcpy(data, text.c_str(), text.size() + 1);
    out_plan_json->data = data;
    out_plan_json->size = text.size();
    out_plan_json->release = &std::free;
    return FRUGAL_OK;
  } catch (const BudgetError& e) {
    set_error(err, std::string(planner) + ": " + e.what());
    return FRUGAL_ERR_BUDGET;
  } catch (const std::bad_alloc&) {
    set_error(err, std::string(planner) + ": out of memory");
    return FRUGAL_ERR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    set_error(err, std::string(planner) + ": " + e.what());
    return FRUGAL_ERR_INVALID_ARGUMENT;
  } catch (...) {  // nothing may cross the C boundary (no Lua here)
    set_error(err, std::string(planner) + ": unknown internal error");
    return FRUGAL_ERR_INTERNAL;
  }
}

}  // namespace frugal::planner
