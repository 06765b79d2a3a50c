#include "thread_pool.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <exception>
#include <stdexcept>
#include <thread>

namespace frugal::cpu {

struct ThreadPool::Job {
  int64_t n = 0;
  std::function<void(int64_t, int)> fn;
  std::atomic<int64_t> next{0};  // next item to claim
  std::atomic<int> slots{0};     // participants so far
  std::atomic<int64_t> done{0};  // items finished
  std::mutex m;
  std::condition_variable finished;
  std::exception_ptr error;
};

ThreadPool::ThreadPool(int threads) : threads_(std::max(1, threads)) {
  for (int i = 1; i < threads_; ++i) workers_.emplace_back([this] { worker(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& t : workers_) t.join();
}

void ThreadPool::work_on(Job& job) {
  int slot = -1;
  for (int64_t i; (i = job.next.fetch_add(1)) < job.n;) {
    if (slot < 0) slot = job.slots.fetch_add(1);
    try {
      job.fn(i, slot);
    } catch (const std::exception&) {
      std::lock_guard<std::mutex> lock(job.m);
      if (!job.error) job.error = std::current_exception();
    }
    if (job.done.fetch_add(1) + 1 == job.n) {
      std::lock_guard<std::mutex> lock(job.m);
      job.finished.notify_all();
    }
  }
}

namespace {

long spin_us() {
  static const long us = [] {
    const char* e = std::getenv("FRUGAL_POOL_SPIN_US");
    return e ? std::atol(e) : 50L;
  }();
  return us;
}

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

// Spins until ready() holds, for up to spin_us() or as long as keep() holds;
// true if ready. While kept it yields now and then, so that on a busy machine
// a spinning thread gives its core to threads with work.
template <class Ready, class Keep>
bool spin_until(Ready ready, Keep keep) {
  const long us = spin_us();
  if (us <= 0 && !keep()) return ready();
  auto end = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  for (int i = 1;; ++i) {
    if (ready()) return true;
    cpu_relax();
    if (i % 64 == 0) {
      const auto now = std::chrono::steady_clock::now();
      if (now > end) {
        if (!keep()) return ready();
        std::this_thread::yield();
        end = now + std::chrono::microseconds(std::max(us, 50L));
      }
    }
  }
}

}  // namespace

void ThreadPool::worker() {
  uint64_t seen = 0, kicks = 0;
  const auto busy = [this] { return busy_.load(std::memory_order_relaxed) > 0; };
  for (;;) {
    std::shared_ptr<Job> job;
    spin_until([&] { return generation_.load(std::memory_order_acquire) != seen; }, busy);
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen || kicks_ != kicks; });
      if (stop_) return;
      kicks = kicks_;
      if (generation_ == seen) continue;  // kicked by a Busy scope: spin again
      seen = generation_;
      job = job_;
    }
    if (job) work_on(*job);
  }
}

ThreadPool::Busy::Busy(ThreadPool& pool) : pool_(pool) {
  if (pool_.busy_.fetch_add(1) > 0 || pool_.threads_ == 1) return;
  {
    std::lock_guard<std::mutex> lock(pool_.mutex_);
    ++pool_.kicks_;
  }
  pool_.wake_.notify_all();
}

ThreadPool::Busy::~Busy() { pool_.busy_.fetch_sub(1); }

void ThreadPool::parallel_for(int64_t n, const std::function<void(int64_t, int)>& fn) {
  if (n <= 0) return;
  if (threads_ == 1 || n == 1) {
    for (int64_t i = 0; i < n; ++i) fn(i, 0);
    return;
  }
  auto job = std::make_shared<Job>();
  job->n = n;
  job->fn = fn;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    job_ = job;
    ++generation_;
  }
  wake_.notify_all();
  work_on(*job);
  {
    // Only items other threads claimed can still be running.
    spin_until([&] { return job->done.load() == job->n; },
               [this] { return busy_.load(std::memory_order_relaxed) > 0; });
    std::unique_lock<std::mutex> lock(job->m);
    job->finished.wait(lock, [&] { return job->done.load() == job->n; });
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (job_ == job) job_.reset();
  }
  if (job->error) std::rethrow_exception(job->error);
}

void parallel_range(ThreadPool* pool, int64_t n, int64_t grain,
                    const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  const int64_t parts =
      pool ? std::min<int64_t>(4 * pool->size(), std::max<int64_t>(1, n / std::max<int64_t>(1, grain))) : 1;
  if (parts <= 1) {
    fn(0, n);
    return;
  }
  pool->parallel_for(parts, [&](int64_t p, int) { fn(n * p / parts, n * (p + 1) / parts); });
}

}  // namespace frugal::cpu
