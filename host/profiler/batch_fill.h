// Filling the batch sizes the profiler did not measure, until a real predictor
// exists: per-BATCH seconds are interpolated linearly between the nearest
// measured batch sizes; outside the measured range the per-SAMPLE time of the
// nearest measured batch is kept (per-batch time proportional to the batch),
// which never goes negative and assumes no further batching gain.
#pragma once

#include <map>
#include <vector>

namespace frugal {

// measured: batch size -> per-batch seconds (at least one entry, sizes >= 1).
// Returns per-batch seconds for batch sizes 1..batch_max (index b - 1);
// measured entries are returned unchanged. Throws frugal::Error on bad input.
std::vector<double> fill_batch_times(const std::map<int, double>& measured, int batch_max);

}  // namespace frugal
