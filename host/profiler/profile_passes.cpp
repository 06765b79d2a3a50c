#include "profiler/profile_passes.h"

#include <algorithm>

#include "frugal/error.h"

namespace frugal {

int repeats_per_pass(int repeats, int passes) {
  if (passes < 1) throw Error("profile: passes must be >= 1, got " + std::to_string(passes));
  return std::max(1, (repeats + passes - 1) / passes);
}

void FastestPass::add(size_t i, double median, double spread) {
  double& b = best_.at(i);
  if (b < 0 || median < b) {
    b = median;
    spread_.at(i) = spread;
  }
}

}  // namespace frugal
