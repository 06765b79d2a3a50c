#include "cache_evict.h"

#include <cstdint>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace frugal::cpu {

void flush_from_cache(const void* p, size_t bytes) {
#if defined(__x86_64__) || defined(__i386__)
  constexpr uintptr_t kLine = 64;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(p) & ~(kLine - 1);
  const uintptr_t end = reinterpret_cast<uintptr_t>(p) + bytes;
  for (uintptr_t a = begin; a < end; a += kLine) _mm_clflush(reinterpret_cast<const void*>(a));
  _mm_mfence();  // the flushes are done before the timed call starts
#else
  (void)p;
  (void)bytes;
#endif
}

}  // namespace frugal::cpu
