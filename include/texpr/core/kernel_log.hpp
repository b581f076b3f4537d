// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// tx::kernel_log: a scope that records, on the current thread, every kernel texpr runs while it lives, and counts
// fresh memory allocations and host waits on a device. Tests assert budgets with it; users see what really ran.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace texpr {

/// One kernel run: what tx::placement prints for it.
struct kernel_record {
  std::string implementation;  ///< The registry implementation's name (`blocked_gemm`, `pairwise_reduce`, ...).
  std::string op;              ///< The op of the node it evaluated (`matmul`, `mean`, ...).
  std::string dtype;           ///< The node's kernel dtype (`float32`, ...).
  std::string backend;         ///< `host` or `cuda`.
  /// Field by field (tests compare a log with tx::planned_kernels).
  friend bool operator==(const kernel_record&, const kernel_record&) = default;
};

class kernel_log;

namespace detail {
/// The innermost live log of this thread (nullptr: none, and recording costs one load and a branch).
inline thread_local kernel_log* current_kernel_log = nullptr;
} // namespace detail

/// Records, on the current thread, every kernel texpr runs from its construction to its destruction: the
/// implementation (as tx::placement names it), op, dtype and backend of each; plus counts of fresh allocations
/// (host blocks from the system allocator, device memory from the driver or pool growth; reuse of a block texpr
/// cached is not an allocation) and of host waits on a device (`item()`, `tx::to_host`). Logs nest: an inner log's
/// records also reach the outer ones. Kernels a worker thread runs on behalf of this thread's evaluation are
/// recorded here (the evaluation is recorded where it is dispatched). Not copyable or movable.
class kernel_log {
 public:
  /// Starts recording on this thread.
  kernel_log() : outer_(detail::current_kernel_log) { detail::current_kernel_log = this; }
  /// Stops recording (the log must be destroyed on the thread that made it, innermost first).
  ~kernel_log() { detail::current_kernel_log = outer_; }
  kernel_log(const kernel_log&) = delete;
  kernel_log& operator=(const kernel_log&) = delete;

  /// Every kernel run so far, in order.
  const std::vector<kernel_record>& entries() const { return entries_; }
  /// How many kernel runs used the implementation named `implementation`.
  std::size_t count(std::string_view implementation) const {
    std::size_t n = 0;
    for (const auto& e : entries_) n += e.implementation == implementation;
    return n;
  }
  /// How many kernel runs evaluated a node of op `op` with implementation `implementation`.
  std::size_t count(std::string_view implementation, std::string_view op) const {
    std::size_t n = 0;
    for (const auto& e : entries_) n += e.implementation == implementation && e.op == op;
    return n;
  }
  /// Fresh allocations (host and device) so far.
  std::size_t allocations() const { return allocations_; }
  /// Bytes of those fresh allocations.
  std::size_t allocated_bytes() const { return allocated_bytes_; }
  /// Host waits on a device so far.
  std::size_t syncs() const { return syncs_; }
  /// The most bytes texpr held at once on the host (device: on devices) beyond what it held when the log began:
  /// blocks handed to tensors and temporaries, from the system or from texpr's caches, less those given back. A
  /// step's peak working memory (blocks a cache keeps but no tensor holds are not counted).
  std::size_t peak_bytes(bool device = false) const { return static_cast<std::size_t>(peak_[device ? 1 : 0]); }
  /// Bytes held now beyond those held when the log began (negative: fewer).
  long long held_bytes(bool device = false) const { return held_[device ? 1 : 0]; }
  /// Forgets everything recorded so far (the log keeps recording).
  void clear() {
    entries_.clear();
    allocations_ = allocated_bytes_ = syncs_ = 0;
    held_[0] = held_[1] = peak_[0] = peak_[1] = 0;
  }
  /// One line per entry and the counters: what a test prints when a budget fails.
  std::string str() const {
    std::string s;
    for (const auto& e : entries_) s += e.backend + " " + e.implementation + " " + e.op + " " + e.dtype + "\n";
    s += std::to_string(entries_.size()) + " kernels, " + std::to_string(allocations_) + " allocations (" +
         std::to_string(allocated_bytes_) + " bytes), " + std::to_string(syncs_) + " syncs, peak " +
         std::to_string(peak_[0]) + " host bytes and " + std::to_string(peak_[1]) + " device bytes held\n";
    return s;
  }

  /// Records a kernel run in every live log of this thread (no-op without one).
  static void record_kernel(std::string_view implementation, std::string_view op, std::string_view dtype,
                            std::string_view backend) {
    for (kernel_log* l = detail::current_kernel_log; l; l = l->outer_)
      l->entries_.push_back({std::string(implementation), std::string(op), std::string(dtype), std::string(backend)});
  }
  /// Records a fresh allocation of `bytes`.
  static void record_allocation(std::size_t bytes) noexcept {
    for (kernel_log* l = detail::current_kernel_log; l; l = l->outer_) ++l->allocations_, l->allocated_bytes_ += bytes;
  }
  /// Records that texpr handed a block of `bytes` to a tensor or temporary, on the host or (device) a device.
  static void record_hold(std::size_t bytes, bool device) noexcept {
    const int d = device ? 1 : 0;
    for (kernel_log* l = detail::current_kernel_log; l; l = l->outer_) {
      l->held_[d] += static_cast<long long>(bytes);
      if (l->held_[d] > l->peak_[d]) l->peak_[d] = l->held_[d];
    }
  }
  /// Records that a block of `bytes` came back from a tensor or temporary.
  static void record_give_back(std::size_t bytes, bool device) noexcept {
    for (kernel_log* l = detail::current_kernel_log; l; l = l->outer_) l->held_[device ? 1 : 0] -= static_cast<long long>(bytes);
  }
  /// Records a host wait on a device.
  static void record_sync() noexcept {
    for (kernel_log* l = detail::current_kernel_log; l; l = l->outer_) ++l->syncs_;
  }
  /// True when a log is live on this thread (recording is then worth its cost).
  static bool active() noexcept { return detail::current_kernel_log != nullptr; }

 private:
  kernel_log* outer_;
  std::vector<kernel_record> entries_;
  std::size_t allocations_ = 0, allocated_bytes_ = 0, syncs_ = 0;
  long long held_[2] = {0, 0}, peak_[2] = {0, 0};  // host, device
};

} // namespace texpr
