// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// detail::memory<cuda>: stream-ordered device allocation (cudaMallocAsync), zero-fill and copies.
#pragma once

#if defined(__CUDACC__)

#include <cuda_runtime.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <unordered_map>
#include <vector>

#include "texpr/backend/cuda/error.hpp"
#include "texpr/backend/cuda/stream.hpp"
#include "texpr/core/backend.hpp"
#include "texpr/core/kernel_log.hpp"
#include "texpr/core/stream.hpp"
#include "texpr/detail/environment.hpp"
#include "texpr/detail/memory.hpp"

namespace texpr::detail {

/// Keeps freed memory in the current device's default pool instead of returning it to the driver at every
/// synchronisation (the pool's default release threshold is 0, so each to_host or item() would hand memory back
/// and the next step would map it again). Done once per device; the memory is still available to other pools
/// of this process and is returned when the process ends. Applications that share the GPU with other processes
/// can lower it again through cudaMemPoolSetAttribute.
inline void keep_pool_memory() {
  static std::atomic<std::uint64_t> done{0};  // one bit per device ordinal below 64
  int dev = 0;
  TEXPR_CUDA_CHECK(cudaGetDevice(&dev));
  const std::uint64_t bit = dev >= 0 && dev < 64 ? std::uint64_t(1) << dev : 0;
  if (bit && (done.load(std::memory_order_relaxed) & bit)) return;
  cudaMemPool_t pool = nullptr;
  TEXPR_CUDA_CHECK(cudaDeviceGetDefaultMemPool(&pool, dev));
  std::uint64_t threshold = UINT64_MAX;
  TEXPR_CUDA_CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold));
  done.fetch_or(bit, std::memory_order_relaxed);
}

/// The blocks one captured CUDA graph reads and writes. The graph's replays reuse the addresses it captured, so
/// every block it touched stays reserved for it until it is destroyed: blocks released during capture (or later,
/// by tensors that captured work wrote) come back here, and only later allocations of the same capture take them.
struct graph_pool {
  int device = 0;                                       ///< Device of the capture.
  stream_t stream = nullptr;                            ///< The capturing stream.
  std::vector<std::pair<void*, std::size_t>> free;      ///< Reserved blocks no tensor holds now, with their class size.
};

/// The graph pool of the capture running on this thread (nullptr outside capture).
inline graph_pool*& active_graph_pool() noexcept {
  thread_local graph_pool* pool = nullptr;
  return pool;
}

/// Released device blocks kept for reuse, per (device, stream) and size class, like PyTorch's caching allocator:
/// a training step allocates the same temporaries every iteration, and each cudaMallocAsync is a driver call (and
/// would be an allocation inside a CUDA graph capture). A block is reused only by an allocation on the stream that
/// released it, where stream order makes the reuse safe without events. Bounded by TEXPR_CUDA_CACHE_MB (default
/// 4096); beyond it released blocks go back to the driver's pool.
class device_block_cache {
 public:
  static device_block_cache& instance() {
    static device_block_cache* cache = new device_block_cache;  // never destroyed: tensors may release at exit
    return *cache;
  }
  device_block_cache(const device_block_cache&) = delete;
  device_block_cache& operator=(const device_block_cache&) = delete;

  /// Bytes reserved for a request: 512-byte multiples below 1 MiB, then eighths of a power of two.
  static std::size_t size_class(std::size_t bytes) {
    constexpr std::size_t small = std::size_t(1) << 20;
    if (bytes < small) return (bytes + 511) / 512 * 512;
    std::size_t p = small;
    while (p * 2 <= bytes) p *= 2;
    const std::size_t step = p / 8;
    return (bytes + step - 1) / step * step;
  }

  /// A block of at least `bytes` usable in stream order on `stream`; nullptr when none is cached.
  void* take(int device, stream_t stream, std::size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (std::size_t i = 0; i != free_.size(); ++i) {
      const block& b = free_[i];
      if (b.bytes == bytes && b.stream == stream && b.device == device) {
        void* p = b.p;
        cached_ -= bytes;
        free_[i] = free_.back();
        free_.pop_back();
        return p;
      }
    }
    return nullptr;
  }
  /// During capture into `g`: a block of exactly `bytes` from g's own blocks, else from the cache (it then belongs
  /// to g); nullptr when neither has one.
  void* take_for_graph(graph_pool& g, std::size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    for (std::size_t i = 0; i != g.free.size(); ++i) {
      if (g.free[i].second == bytes) {
        void* p = g.free[i].first;
        g.free[i] = g.free.back();
        g.free.pop_back();
        return p;
      }
    }
    for (std::size_t i = 0; i != free_.size(); ++i) {
      const block& b = free_[i];
      if (b.bytes == bytes && b.stream == g.stream && b.device == g.device) {
        void* p = b.p;
        cached_ -= bytes;
        free_[i] = free_.back();
        free_.pop_back();
        pinned_[p] = &g;
        return p;
      }
    }
    return nullptr;
  }
  /// Keeps a released block: in the graph pool that owns it, or in `capturing` (the pool of a capture running on
  /// this thread) when released on its stream, else in the cache; false (the caller frees it) when the cache is full.
  bool give(int device, stream_t stream, void* p, std::size_t bytes, graph_pool* capturing = nullptr) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    try {
      if (const auto it = pinned_.find(p); it != pinned_.end()) {
        it->second->free.emplace_back(p, bytes);
        return true;
      }
      if (capturing && capturing->stream == stream && capturing->device == device) {
        capturing->free.emplace_back(p, bytes);
        pinned_[p] = capturing;
        return true;
      }
    } catch (...) {
      return false;  // out of host memory: the block goes back to the driver
    }
    if (cached_ + bytes > limit_ || free_.size() >= max_blocks) return false;
    try {
      free_.push_back({p, bytes, stream, device});
    } catch (...) {
      return false;
    }
    cached_ += bytes;
    return true;
  }
  /// Remembers the class size of a live block (release is not told it).
  void note(void* p, std::size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex_);
    sizes_[p] = bytes;
  }
  /// The class size of live block p (0 if texpr did not allocate it), forgetting it.
  std::size_t forget(void* p) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    const auto it = sizes_.find(p);
    if (it == sizes_.end()) return 0;
    const std::size_t n = it->second;
    sizes_.erase(it);
    return n;
  }
  /// Ends g's reservation (its graph is destroyed): its free blocks return to the cache (or the driver) in order
  /// on g's stream, and blocks tensors still hold are released to the cache as usual later.
  void release_graph_pool(graph_pool& g) noexcept {
    std::vector<std::pair<void*, std::size_t>> overflow;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (auto it = pinned_.begin(); it != pinned_.end();) {
        if (it->second == &g) it = pinned_.erase(it);
        else ++it;
      }
      for (const auto& [p, bytes] : g.free) {
        bool kept = false;
        if (cached_ + bytes <= limit_ && free_.size() < max_blocks) {
          try {
            free_.push_back({p, bytes, g.stream, g.device});
            cached_ += bytes;
            kept = true;
          } catch (...) {
          }
        }
        if (!kept) overflow.emplace_back(p, bytes);
      }
      g.free.clear();
    }
    for (const auto& [p, bytes] : overflow)
      if (cudaFreeAsync(p, g.stream) != cudaSuccess) (void)cudaGetLastError();
  }
  /// Hands every cached block back to the driver (each freed on the stream that released it).
  void release_all() noexcept {
    std::vector<block> blocks;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      blocks.swap(free_);
      cached_ = 0;
    }
    int dev = 0;
    const bool have_dev = cudaGetDevice(&dev) == cudaSuccess;
    for (const block& b : blocks) {
      if (have_dev && b.device != dev) (void)cudaSetDevice(b.device);
      if (cudaFreeAsync(b.p, b.stream) != cudaSuccess) (void)cudaGetLastError();
      if (have_dev && b.device != dev) (void)cudaSetDevice(dev);
    }
  }
  /// Bytes held by the cache now.
  std::size_t cached_bytes() {
    std::lock_guard<std::mutex> lock(mutex_);
    return cached_;
  }

 private:
  static constexpr std::size_t max_blocks = 4096;
  device_block_cache() {
    const std::uint64_t mb = env_number("TEXPR_CUDA_CACHE_MB", 0, std::uint64_t(1) << 24, env_above::ignore).value_or(4096);
    limit_ = static_cast<std::size_t>(mb) << 20;
  }
  struct block {
    void* p;
    std::size_t bytes;
    stream_t stream;
    int device;
  };
  std::mutex mutex_;
  std::vector<block> free_;
  std::unordered_map<void*, std::size_t> sizes_;
  std::unordered_map<void*, graph_pool*> pinned_;  // blocks reserved for a captured graph
  std::size_t cached_ = 0, limit_ = 0;
};

/// Device memory from the current device's stream-ordered pool through texpr's block cache; every operation is
/// enqueued on `stream`.
/// Checks of device results the host must read to report (cuSOLVER's `info`): a row that enqueues such a result
/// adds a check here instead of waiting for it, so its evaluation stays free of host waits (and capturable); the
/// next memory<cuda>::copy_to_host (tx::to_host, item(), printing: the first host wait that needs device data, or a
/// copy of an empty tensor) runs every pending check after its own wait and throws the first failure. Process-wide: a check added on one stream
/// is run by the next copy to the host on any stream (it waits for its own stream).
class deferred_checks {
 public:
  /// The process's list (never destroyed: copies at exit may still run it).
  static deferred_checks& instance() {
    static auto* checks = new deferred_checks;
    return *checks;
  }
  /// Adds a check; it runs once, at the next run().
  void add(std::function<void()> check) {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_.push_back(std::move(check));
  }
  /// Runs and forgets every pending check, all of them even when one throws; rethrows the first failure.
  void run() {
    std::vector<std::function<void()>> now;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      now.swap(pending_);
    }
    std::exception_ptr first;
    for (auto& check : now) {
      try {
        check();
      } catch (...) {
        if (!first) first = std::current_exception();
      }
    }
    if (first) std::rethrow_exception(first);
  }

 private:
  std::mutex mutex_;
  std::vector<std::function<void()>> pending_;
};

template <> struct memory<cuda> {
  /// The stream work asked for on `s` runs on: `s`, or texpr's stream (never the legacy default stream).
  static stream_t resolve(stream_t s) { return resolve_stream(s); }
  /// Enqueues an allocation; out of memory (after handing the cache back) throws cuda_error and changes nothing
  /// else. During a capture on `stream` the block comes from the capture's pool or the cache, never the driver.
  static void* allocate(std::size_t bytes, stream_t stream) {
    if (bytes == 0) return nullptr;
    stream = resolve_stream(stream);
    keep_pool_memory();
    int dev = 0;
    TEXPR_CUDA_CHECK(cudaGetDevice(&dev));
    auto& cache = device_block_cache::instance();
    const std::size_t total = device_block_cache::size_class(bytes);
    graph_pool* capturing = active_graph_pool();
    void* p = nullptr;
    if (capturing && capturing->stream == stream && capturing->device == dev) {
      p = cache.take_for_graph(*capturing, total);
      if (!p)
        throw cuda_error("tx::capture_step: allocate(" + std::to_string(total) + " bytes)",
                         "no block of that size in texpr's device cache (an allocation during capture would not be "
                         "replayed): run the step once on the same stream before capturing it",
                         __FILE__, __LINE__, static_cast<int>(cudaErrorStreamCaptureUnsupported));
    } else {
      p = cache.take(dev, stream, total);
    }
    if (!p) {
      cudaError_t e = cudaMallocAsync(&p, total, stream);
      if (e == cudaErrorMemoryAllocation) {  // the cache may hold what is missing: give it back and retry once
        (void)cudaGetLastError();
        cache.release_all();
        TEXPR_CUDA_CHECK(cudaDeviceSynchronize());
        kernel_log::record_sync();
        e = cudaMallocAsync(&p, total, stream);
      }
      TEXPR_CUDA_CHECK(e);
      kernel_log::record_allocation(total);
    }
    kernel_log::record_hold(total, true);
    try {
      cache.note(p, total);
    } catch (...) {
      if (cudaFreeAsync(p, stream) != cudaSuccess) (void)cudaGetLastError();
      throw;
    }
    return p;
  }
  /// Enqueues the release after the work already on `stream` (so kernels still reading p finish first): the block
  /// goes to the cache for the next allocation on `stream`, or back to the driver.
  static void release(void* p, stream_t stream) noexcept {
    if (!p) return;
    if (!stream) {
      try {
        stream = resolve_stream(stream);
      } catch (...) {  // no device: nothing was enqueued on texpr's stream either
      }
    }
    const std::size_t total = device_block_cache::instance().forget(p);
    kernel_log::record_give_back(total, true);
    int dev = 0;
    if (total && cudaGetDevice(&dev) == cudaSuccess &&
        device_block_cache::instance().give(dev, stream, p, total, active_graph_pool()))
      return;
    // A destructor cannot report a failure; clear it so it does not surface at an unrelated later check.
    if (cudaFreeAsync(p, stream) != cudaSuccess) (void)cudaGetLastError();
  }
  static void zero(void* p, std::size_t bytes, stream_t stream) {
    if (bytes) TEXPR_CUDA_CHECK(cudaMemsetAsync(p, 0, bytes, resolve_stream(stream)));
  }
  static void copy(void* dst, const void* src, std::size_t bytes, stream_t stream) {
    if (bytes) TEXPR_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, resolve_stream(stream)));
  }
  /// The one synchronising operation: the host needs the bytes when this returns. Runs the deferred checks after
  /// its wait (deferred_checks), an empty copy's too (a failure is reported at the first read of any result, as on
  /// the host, where it throws at once).
  static void copy_to_host(void* dst, const void* src, std::size_t bytes, stream_t stream) {
    if (!bytes) {
      deferred_checks::instance().run();  // (each check waits for its own stream)
      return;
    }
    stream = resolve_stream(stream);
    TEXPR_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream));
    TEXPR_CUDA_CHECK(cudaStreamSynchronize(stream));
    kernel_log::record_sync();
    deferred_checks::instance().run();
  }
  /// Host to device; from pageable memory the runtime stages the source before returning.
  static void copy_from_host(void* dst, const void* src, std::size_t bytes, stream_t stream) {
    if (bytes) TEXPR_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, resolve_stream(stream)));
  }
};

/// A stream-ordered scratch buffer released (on the same stream) when it goes out of scope.
struct device_scratch {
  void* p = nullptr;
  stream_t stream = nullptr;
  device_scratch(std::size_t bytes, stream_t s) : stream(resolve_stream(s)) { p = memory<cuda>::allocate(bytes, stream); }
  device_scratch(const device_scratch&) = delete;
  device_scratch& operator=(const device_scratch&) = delete;
  ~device_scratch() { memory<cuda>::release(p, stream); }
};

/// The completion counters ("tickets") of launches whose last block finishes the work, one per (device, stream).
/// A counter is zeroed once, by a memset when its stream first needs one, and every such launch leaves it at zero
/// (its last block resets it before exiting); launches on one stream run in order, so one counter per stream is
/// enough, a steady-state step enqueues no memset for them and a captured graph has no memset node. The counters
/// live as long as the process (4 bytes per stream used, from 256-byte blocks of cudaMalloc).
class stream_tickets {
 public:
  /// The process's counters.
  static stream_tickets& instance() {
    static stream_tickets* t = new stream_tickets;  // never destroyed: launches may still use one at exit
    return *t;
  }
  /// The counter of `stream` on the current device, zero whenever no launch using it is running. A stream's first
  /// call enqueues the memset that zeroes it, so it must not be inside a capture (the step runs once eagerly first).
  unsigned* get(stream_t stream) {
    int dev = 0;
    TEXPR_CUDA_CHECK(cudaGetDevice(&dev));
    const std::lock_guard<std::mutex> lock(mutex_);
    const auto key = std::make_pair(dev, static_cast<void*>(stream));
    if (const auto it = tickets_.find(key); it != tickets_.end()) return it->second;
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    TEXPR_CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
    if (status != cudaStreamCaptureStatusNone)
      throw cuda_error("tx::capture_step: the first reduction on this stream",
                       "its completion counter would be zeroed inside the capture: run the step once on the same "
                       "stream before capturing it",
                       __FILE__, __LINE__, static_cast<int>(cudaErrorStreamCaptureUnsupported));
    chunk& c = chunks_[dev];
    if (c.used == chunk_tickets) {
      void* p = nullptr;
      TEXPR_CUDA_CHECK(cudaMalloc(&p, chunk_tickets * sizeof(unsigned)));
      kernel_log::record_allocation(chunk_tickets * sizeof(unsigned));
      c = {static_cast<unsigned*>(p), 0};
    }
    unsigned* t = c.base + c.used;
    TEXPR_CUDA_CHECK(cudaMemsetAsync(t, 0, sizeof(unsigned), stream));
    tickets_.emplace(key, t);
    ++c.used;
    return t;
  }

 private:
  static constexpr std::size_t chunk_tickets = 64;
  struct chunk {
    unsigned* base = nullptr;
    std::size_t used = chunk_tickets;
  };
  std::mutex mutex_;
  std::map<std::pair<int, void*>, unsigned*> tickets_;
  std::map<int, chunk> chunks_;
};

/// The scratch of a launch whose last block finishes the work: `count` partials of A from texpr's cache, and the
/// stream's ticket (stream_tickets: zero before the launch; the last block zeroes it again).
template <class A> struct ticketed_scratch {
  device_scratch block;  ///< the partials
  A* partials;           ///< count of them
  unsigned* ticket;      ///< blocks finished
  ticketed_scratch(std::size_t count, stream_t s)
      : block(sizeof(A) * (count ? count : 1), s),
        partials(static_cast<A*>(block.p)),
        ticket(stream_tickets::instance().get(block.stream)) {}
};

} // namespace texpr::detail

#endif // __CUDACC__
