// The executor's thread pool: every item runs exactly once, slots stay below
// min(threads, items), errors come back to the caller, and thousands of small
// jobs in a row neither hang nor lose items (late workers find nothing left).
#include <atomic>
#include <catch2/catch.hpp>
#include <stdexcept>
#include <vector>

#include "thread_pool.h"

using frugal::cpu::ThreadPool;

TEST_CASE("parallel_for runs each item once with slots below min(threads, items)", "[cpu][threads]") {
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    CHECK(pool.size() == threads);
    for (int64_t n : {1, 2, 3, 7, 64, 1000}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      std::atomic<int> bad_slot{0};
      pool.parallel_for(n, [&](int64_t i, int slot) {
        hits[size_t(i)].fetch_add(1);
        if (slot < 0 || slot >= std::min<int64_t>(threads, n)) bad_slot.fetch_add(1);
      });
      int wrong = 0;
      for (auto& h : hits) wrong += h.load() != 1;
      CHECK(wrong == 0);
      CHECK(bad_slot.load() == 0);
    }
  }
}

TEST_CASE("many small jobs in a row complete, and parallel_range covers the range once", "[cpu][threads]") {
  ThreadPool pool(3);
  int64_t total = 0;
  for (int job = 0; job < 3000; ++job) {
    std::atomic<int64_t> sum{0};
    frugal::cpu::parallel_range(&pool, 100 + job % 7, 1, [&](int64_t a, int64_t b) {
      for (int64_t i = a; i < b; ++i) sum.fetch_add(i);
    });
    const int64_t n = 100 + job % 7;
    CHECK(sum.load() == n * (n - 1) / 2);
    total += sum.load();
  }
  CHECK(total > 0);
}

TEST_CASE("an exception in an item reaches the caller after the other items finish", "[cpu][threads]") {
  ThreadPool pool(2);
  std::atomic<int> ran{0};
  CHECK_THROWS_WITH(pool.parallel_for(50,
                                      [&](int64_t i, int) {
                                        ran.fetch_add(1);
                                        if (i == 17) throw std::runtime_error("item 17 failed");
                                      }),
                    "item 17 failed");
  CHECK(ran.load() == 50);
  // The pool still works afterwards.
  std::atomic<int> again{0};
  pool.parallel_for(10, [&](int64_t, int) { again.fetch_add(1); });
  CHECK(again.load() == 10);
}

TEST_CASE("while a Busy scope lives the workers spin between jobs; afterwards the pool still works",
          "[cpu][threads]") {
  ThreadPool pool(2);
  int64_t sum = 0;
  {
    const ThreadPool::Busy busy(pool);
    const ThreadPool::Busy nested(pool);  // scopes nest
    for (int job = 0; job < 500; ++job) {
      std::atomic<int64_t> s{0};
      pool.parallel_for(1 + job % 5, [&](int64_t i, int) { s.fetch_add(i + 1); });
      sum += s.load();
    }
  }
  CHECK(sum == 100 * (1 + 3 + 6 + 10 + 15));
  std::atomic<int> after{0};
  pool.parallel_for(9, [&](int64_t, int) { after.fetch_add(1); });
  CHECK(after.load() == 9);
}
