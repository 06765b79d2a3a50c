// The executor's threads: a small pool in which the calling thread takes part.
//
// Why not OpenMP: on a shared machine (CI runners, a 2-core box with other jobs)
// a parallel region waits at its end for every thread of the team, including
// one the OS has not scheduled yet, so each region can cost a scheduler time
// slice; with OpenBLAS's own spinning threads on top, multi-threaded runs were
// several times slower than single-threaded ones. Here work items are claimed
// from a shared counter and the caller waits only for items that another thread
// has actually claimed: a worker that wakes late finds nothing left, and the
// worst case is the speed of one thread. OpenBLAS runs single-threaded inside.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace frugal::cpu {

class ThreadPool {
 public:
  // `threads` participants: the caller plus threads - 1 workers.
  explicit ThreadPool(int threads);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return threads_; }

  // Runs fn(item, slot) for every item in [0, n). `slot` numbers the
  // participants that took part, in the order they first claimed an item, so
  // it is below min(size(), n): a per-participant scratch index. Returns when
  // all items are done; rethrows the first std::exception an item threw.
  void parallel_for(int64_t n, const std::function<void(int64_t item, int slot)>& fn);

  // While one exists, workers spin between jobs instead of sleeping (a run's
  // layers follow each other; a sleeping worker is woken late, and later still
  // after the machine idled). Creating one wakes sleeping workers right away.
  class Busy {
   public:
    explicit Busy(ThreadPool& pool);
    ~Busy();
    Busy(const Busy&) = delete;
    Busy& operator=(const Busy&) = delete;

   private:
    ThreadPool& pool_;
  };

 private:
  struct Job;
  void worker();
  static void work_on(Job& job);

  int threads_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::shared_ptr<Job> job_;  // the current job (workers keep it alive while on it)
  std::atomic<uint64_t> generation_{0};
  std::atomic<int> busy_{0};        // Busy scopes alive
  std::atomic<uint64_t> kicks_{0};  // Busy scopes begun: wakes sleeping workers
  bool stop_ = false;
};

// Splits [0, n) into about 4 x size() chunks of at least `grain` items and runs
// fn(begin, end) on each; serial when the pool is null or has one thread.
void parallel_range(ThreadPool* pool, int64_t n, int64_t grain,
                    const std::function<void(int64_t, int64_t)>& fn);

}  // namespace frugal::cpu
