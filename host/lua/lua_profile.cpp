#include "lua/lua_profile.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>

#include "frugal/error.h"
#include "lua/lua_binding.h"
#include "lua/lua_executor.h"
#include "lua/lua_json.h"
#include "lua/lua_model.h"
#include "lua/lua_options.h"
#include "lua/lua_records.h"
#include "lua/lua_terminal.h"
#include "profiler/cost_fit.h"
#include "profiler/profiler.h"

namespace frugal {

namespace {

// Progress on stderr: on a terminal a status line replaced in place ("\r<line>"
// erasing the rest, "" clears it); otherwise a line at each tenth of the work,
// so a log shows a long profile moving.
std::function<void(const std::string&, double)> stderr_progress() {
  if (isatty(STDERR_FILENO) == 1)
    return [](const std::string& line, double) {
      // Cut to the terminal's width: a wrapped line would not be erased by "\r".
      const int columns = terminal_columns(STDERR_FILENO);
      const std::string shown = columns > 1 ? line.substr(0, static_cast<size_t>(columns - 1)) : line;
      std::fprintf(stderr, "\r%s\033[K", shown.c_str());
      if (line.empty()) std::fprintf(stderr, "\r");
      std::fflush(stderr);
    };
  auto next_tenth = std::make_shared<int>(0);
  return [next_tenth](const std::string& line, double done) {
    const int tenth = static_cast<int>(done * 10);
    if (line.empty() || tenth < *next_tenth) return;
    *next_tenth = tenth + 1;
    std::fprintf(stderr, "frugal: %3d%% %s\n", static_cast<int>(done * 100), line.c_str());
    std::fflush(stderr);
  };
}

ProfileOptions parse_profile_options(lua_State* L, int idx) {
  ProfileOptions o;
  const int64_t upto = opt_integer_field(L, idx, "upto", -1);  // -1: not given
  if (upto != -1 && (upto < 1 || upto > 1024))
    throw Error("option 'upto' must be in 1..1024, got " + std::to_string(upto));
  if (!lua_isnoneornil(L, idx)) {
    lua_getfield(L, idx, "batches");
    if (!lua_isnil(L, -1)) {
      for (int64_t b : check_integer_list(L, -1, "option 'batches'")) {
        if (b < 1 || b > 1024)
          throw Error("option 'batches': batch size " + std::to_string(b) + " is outside 1..1024");
        o.batches.push_back(static_cast<int>(b));
      }
      if (o.batches.empty()) throw Error("option 'batches' is empty: give at least one batch size");
    }
    lua_pop(L, 1);
  }
  int largest = 0;
  for (int b : o.batches) largest = std::max(largest, b);
  if (upto != -1 && largest > upto)
    throw Error("option 'batches': batch size " + std::to_string(largest) + " is outside 1.." +
                std::to_string(upto) + " (upto)");
  if (upto != -1)
    o.batch_max = static_cast<int>(upto);
  else
    o.batch_max = largest > 0 ? largest : 8;
  const int64_t repeats = opt_integer_field(L, idx, "repeats", 5);
  if (repeats < 1 || repeats > 10000)
    throw Error("option 'repeats' must be in 1..10000, got " + std::to_string(repeats));
  o.repeats = static_cast<int>(repeats);
  const int64_t passes = opt_integer_field(L, idx, "passes", 3);
  if (passes < 1 || passes > 100)
    throw Error("option 'passes' must be in 1..100, got " + std::to_string(passes));
  o.passes = static_cast<int>(passes);
  o.reuse_cache = opt_bool_field(L, idx, "cache", true);
  o.cache_dir = opt_string_field(L, idx, "cache_dir", "");
  o.step_overhead = opt_bool_field(L, idx, "step_overhead", true);
  if (opt_bool_field(L, idx, "progress", true)) o.progress = stderr_progress();
  return o;
}

int l_profile(lua_State* L) {
  check_option_names(
      L, 2,
      {"executor", "threads", "device", "budget", "upto", "batches", "repeats", "passes", "cache",
       "cache_dir", "progress", "fit", "gate_activity", "step_overhead", "time_layer"});
  const ProfileOptions opt = parse_profile_options(L, 2);
  LuaExecutor* ex = nullptr;
  if (!is_object(L, 1, kExecutorType)) {
    if (!is_object(L, 1, kModelType))
      throw Error(
          "argument #1 must be a model (frugal.load / frugal.zoo) or an executor (frugal.executor), got " +
          std::string(luaL_typename(L, 1)));
    ex = &push_executor(L, 1, parse_executor_settings(L, 2));  // stays on the stack while measuring
  } else {
    ex = &check_executor(L, 1);  // refuses a closed one
    for (const char* k : {"executor", "threads", "device", "budget", "gate_activity", "time_layer"}) {
      if (!lua_istable(L, 2)) break;
      lua_getfield(L, 2, k);
      const bool given = !lua_isnil(L, -1);
      lua_pop(L, 1);
      if (given)
        throw Error(std::string("option '") + k +
                    "' applies when profiling a model; an executor is measured as it was created");
    }
  }
  // fit: smooth the measured times per layer (profiler/cost_fit.h); the cache keeps the raw table.
  const bool fit = lua_istable(L, 2) && opt_bool_field(L, 2, "fit", false);
  ProfileResult r = profile_costs(ex->client, {ex->executor, ex->model_name, ex->model_hash}, opt);
  if (fit) r.costs = fit_cost_times(r.costs);
  if (!r.warnings.empty()) std::fprintf(stderr, "%s\n", r.warnings.c_str());

  push_record(L, r.costs, Record::CostTable);
  lua_createtable(L, 0, 5);
  lua_pushboolean(L, r.cached);
  lua_setfield(L, -2, "cached");
  if (!r.cache_file.empty()) {
    lua_pushstring(L, r.cache_file.c_str());
    lua_setfield(L, -2, "cache_file");
  }
  lua_pushnumber(L, r.seconds);
  lua_setfield(L, -2, "seconds");
  std::vector<int64_t> measured;
  for (int b : measured_batch_list(opt)) measured.push_back(b);
  push_integer_list(L, measured);
  lua_setfield(L, -2, "measured_batches");
  std::vector<std::string> warnings;
  size_t start = 0;
  while (start < r.warnings.size()) {
    size_t end = r.warnings.find('\n', start);
    if (end == std::string::npos) end = r.warnings.size();
    warnings.push_back(r.warnings.substr(start, end - start));
    start = end + 1;
  }
  push_string_list(L, warnings);
  lua_setfield(L, -2, "warnings");
  return 2;
}

const LuaBinding kFunctions[] = {{"profile", l_profile}, {nullptr, nullptr}};

}  // namespace

void open_lua_profile(lua_State* L, int module_index) {
  register_bindings(L, module_index, kFunctions, "frugal.");
}

}  // namespace frugal
