// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Host threading: a small persistent std::thread pool and the public thread-count API.
//
// The host backend splits large loops (elementwise, reductions, GEMM) into tasks run by a pool of
// std::threads that lives for the whole program; the calling thread works too. No OpenMP: header-only
// users need no extra flag. The thread count is, in order of precedence: tx::set_num_threads(n), the
// TEXPR_NUM_THREADS environment variable, std::thread::hardware_concurrency(); never more than tx::max_threads().
// A loop started from a pool thread, or while another thread is using the pool, runs serially on its caller (no
// nesting, no deadlock).
// Reductions split their input at boundaries that depend only on the input size, and combine the parts in a
// fixed order, so their results do not depend on the thread count or on scheduling.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <type_traits>
#include <vector>

#include "texpr/core/config.hpp"
#include "texpr/detail/environment.hpp"

namespace texpr {

/// The most threads the host backend runs: 4 times the hardware concurrency (4 when it is unknown). More only
/// adds stacks and context switches to loops that are already split across every core; a few times the cores
/// still lets a small machine test thread counts above its own.
inline int max_threads() {
  static const int limit = [] {
    const unsigned hc = std::thread::hardware_concurrency();
    return 4 * static_cast<int>(std::clamp(hc, 1u, 1u << 20));
  }();
  return limit;
}

namespace detail::host_impl {

inline int default_num_threads() {
  static const std::optional<std::uint64_t> env = env_number("TEXPR_NUM_THREADS", 1, static_cast<std::uint64_t>(max_threads()));
  if (env) return static_cast<int>(*env);
  const unsigned hc = std::thread::hardware_concurrency();
  return hc > 0 ? std::min(static_cast<int>(std::min(hc, 1u << 20)), max_threads()) : 1;
}

inline std::atomic<int>& requested_threads() {
  static std::atomic<int> n{default_num_threads()};
  return n;
}

inline thread_local bool in_pool_task = false;

// Waits briefly for a condition by polling, before a caller falls back to sleeping: waking a sleeping thread
// through the kernel costs 10-50 us on a VM, as much as a whole 64-row GEMM, and the host backend runs
// many short parallel loops back to back. Returns whether cond() became true within about `us` microseconds.
template <class Cond> bool spin_until(Cond&& cond, int us) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  for (;;) {
    for (int i = 0; i < 64; ++i) {
      if (cond()) return true;
#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
      __builtin_ia32_pause();
#endif
    }
    if (std::chrono::steady_clock::now() >= until) return cond();
  }
}

/// How long (microseconds) an idle pool thread polls for the next job before it sleeps.
inline constexpr int pool_spin_us = 200;

// The pool: workers poll for a new job for pool_spin_us after each one, then sleep on a condition variable; a
// job is a task count and a callback, and tasks are handed out through an atomic counter (dynamic scheduling).
class thread_pool {
 public:
  static thread_pool& instance() {
    static thread_pool pool;
    return pool;
  }
  thread_pool(const thread_pool&) = delete;
  thread_pool& operator=(const thread_pool&) = delete;
  ~thread_pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_.store(true);
    }
    wake_.notify_all();
    for (auto& w : workers_) w.join();
  }

  /// A task callback: call(arg, t) runs task t. Loops reach the pool through this one non-template entry, so
  /// each parallel loop costs its body once (in its trampoline), not a copy of the pool per loop type.
  using task_fn = void (*)(void*, index_t);

  // Runs call(arg, t) for every t in [0, tasks) on at most `threads` threads (the caller included).
  void run(index_t tasks, int threads, task_fn call, void* arg) {
    if (tasks <= 0) return;
    threads = static_cast<int>(std::min<index_t>(threads, tasks));
    std::unique_lock<std::mutex> busy(run_mutex_, std::try_to_lock);
    if (threads <= 1 || in_pool_task || !busy.owns_lock()) {
      for (index_t t = 0; t < tasks; ++t) call(arg, t);
      return;
    }
    {
      std::lock_guard<std::mutex> lock(mutex_);
      while (static_cast<int>(workers_.size()) < threads - 1) {
        const int id = static_cast<int>(workers_.size());
        workers_.emplace_back([this, id] { worker_loop(id); });
      }
      call_ = call;
      arg_ = arg;
      tasks_ = tasks;
      next_.store(0, std::memory_order_release);
      participants_ = threads - 1;
      error_ = nullptr;
      generation_.fetch_add(1, std::memory_order_release);
      if (sleepers_ > 0) wake_.notify_all();
    }
    work();
    // Every task has been taken; wait only for the workers that took some. A worker that wakes later finds
    // no task left and does not join, so a descheduled thread never holds up the caller (a loaded machine).
    spin_until([this] { return active_.load(std::memory_order_acquire) == 0; }, pool_spin_us);
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [this] { return active_.load(std::memory_order_relaxed) == 0; });
    call_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  thread_pool() = default;

  void work() {
    const bool was = in_pool_task;
    in_pool_task = true;
    try {
      for (index_t t; (t = next_.fetch_add(1, std::memory_order_acq_rel)) < tasks_;) call_(arg_, t);
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_) error_ = std::current_exception();
      next_.store(tasks_, std::memory_order_relaxed);  // the other threads stop taking tasks
    }
    in_pool_task = was;
  }

  void worker_loop(int id) {
    std::uint64_t seen = 0;
    for (;;) {
      spin_until([&] { return generation_.load(std::memory_order_acquire) != seen || stop_.load(); }, pool_spin_us);
      std::unique_lock<std::mutex> lock(mutex_);
      ++sleepers_;
      wake_.wait(lock, [&] { return stop_.load() || generation_.load(std::memory_order_relaxed) != seen; });
      --sleepers_;
      if (stop_.load()) return;
      seen = generation_.load(std::memory_order_relaxed);
      if (id >= participants_ || next_.load(std::memory_order_relaxed) >= tasks_) continue;
      active_.fetch_add(1, std::memory_order_relaxed);
      lock.unlock();
      work();
      lock.lock();
      if (active_.fetch_sub(1, std::memory_order_acq_rel) == 1) done_.notify_one();
    }
  }

  std::mutex run_mutex_;  // one job at a time; a second caller runs serially
  std::mutex mutex_;      // guards the job description below, sleepers_ and the condition variables
  std::condition_variable wake_, done_;
  std::vector<std::thread> workers_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> generation_{0};  // bumped once per job; polled by idle workers
  void (*call_)(void*, index_t) = nullptr;
  void* arg_ = nullptr;
  index_t tasks_ = 0;
  std::atomic<index_t> next_{0};
  int participants_ = 0;
  int sleepers_ = 0;               // workers blocked on wake_
  std::atomic<int> active_{0};     // workers inside work() for the current job
  std::exception_ptr error_;
};

// Runs tasks [0, tasks) through call(arg, t) using the current thread count; serial when only one thread is
// allowed. Not a template: the serial path and the pool share the caller's one trampoline.
inline void run_tasks(index_t tasks, thread_pool::task_fn call, void* arg) {
  const int threads = requested_threads().load(std::memory_order_relaxed);
  if (threads <= 1 || tasks <= 1 || in_pool_task) {
    for (index_t t = 0; t < tasks; ++t) call(arg, t);
    return;
  }
  thread_pool::instance().run(tasks, threads, call, arg);
}

// Runs f(t) for t in [0, tasks) using the current thread count.
template <class F> void parallel_for(index_t tasks, F&& f) {
  using Fn = std::remove_reference_t<F>;
  run_tasks(tasks, [](void* p, index_t t) { (*static_cast<Fn*>(p))(t); },
            const_cast<void*>(static_cast<const void*>(std::addressof(f))));
}

// How many tasks to cut `work` units into so each has at least `grain` units (1 when not worth threading).
inline index_t task_count(index_t work, index_t grain) {
  const int threads = requested_threads().load(std::memory_order_relaxed);
  if (threads <= 1 || work < 2 * grain) return 1;
  return std::min<index_t>(work / grain, static_cast<index_t>(threads));
}

} // namespace detail::host_impl

/// Sets the number of threads the host backend uses (1 = serial), at most max_threads(); n <= 0 restores the
/// default (TEXPR_NUM_THREADS, else the hardware concurrency).
inline void set_num_threads(int n) {
  detail::host_impl::requested_threads().store(n > 0 ? std::min(n, max_threads()) : detail::host_impl::default_num_threads());
}

/// The number of threads the host backend uses.
inline int num_threads() { return detail::host_impl::requested_threads().load(); }

} // namespace texpr
