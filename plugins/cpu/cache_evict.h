// Putting the caches into the state a layer meets inside a run, before each
// timed repetition of time_layer: inside a run a layer's output lands on arena
// memory that no recent layer touched, while its inputs were just written by
// the layers before it. Timed again and again on the same buffers, the output
// sits in cache instead, and memory-bound layers were priced at cache speed:
// ResNet-50's adds at batch 12 at half their time in a run, its whole plans 16%
// below their measured time.
#pragma once

#include <cstddef>

namespace frugal::cpu {

// Writes back and drops the lines of [p, p + bytes) from every cache level, so
// that the next writes there miss as writes to untouched memory do in a run.
// Costs about what reading the bytes from memory costs. Without an x86 cache
// flush instruction it does nothing.
void flush_from_cache(const void* p, size_t bytes);

}  // namespace frugal::cpu
