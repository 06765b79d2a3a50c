// The executor's facts about each layer in a cost table, for predictors: the
// op list, node names, kernel path and MACs of describe(), and a table with
// exact bytes but no times yet (what a predictor fills).
#pragma once

#include <nlohmann/json.hpp>

#include "loader/executor_client.h"
#include "profiler/profiler.h"

namespace frugal {

// Adds "ops", "nodes", "algorithm" (where given) and "macs_per_sample" of
// describe() to each layer of `costs` with the same name.
void add_executor_facts(nlohmann::json& costs, const nlohmann::json& describe);

// A cost table of every layer with in/out/ws bytes for batch 1..upto from
// layer_bytes, the executor's facts, and empty time_s and source lists.
nlohmann::json unmeasured_table(ExecutorClient& ex, const ProfileSubject& subject, int upto);

// Copies the measured times of `measured` (layers matched by name, batch sizes
// up to the smaller batch_max) into `table`, marked "measured", with each
// layer's measured "step_overhead_s" (which a predictor keeps). Throws Error
// when the two tables are of different executors, devices or layers.
void merge_measured(nlohmann::json& table, const nlohmann::json& measured);

}  // namespace frugal
