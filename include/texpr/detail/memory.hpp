// SPDX-License-Identifier: Apache-2.0 WITH LLVM-exception
// Per-backend raw memory: allocation, release, zero-fill and copies. The cuda side lives in
// backend/cuda/memory.hpp and exists only under nvcc; elsewhere using it is a compile error.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <type_traits>
#include <vector>

#include "texpr/core/backend.hpp"
#include "texpr/core/config.hpp"
#include "texpr/core/kernel_log.hpp"
#include "texpr/core/stream.hpp"
#include "texpr/detail/environment.hpp"
#include "texpr/detail/type_list.hpp"

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace texpr::detail {

/// Releases a buffer; a plain function pointer so tensors of any backend destroy correctly anywhere.
using release_fn = void (*)(void*, stream_t) noexcept;

/// Fails to compile, once per program however many places need it, when device memory is used outside nvcc.
template <class Backend> constexpr void require_memory_compiler() {
  static_assert(!std::is_same_v<Backend, cuda> || cuda_compiler_v,
                "texpr: device memory can only be allocated, copied or evaluated in a CUDA translation unit; "
                "compile this file with nvcc (the cuda types and registry are usable everywhere)");
}

/// Backend memory. Outside nvcc, memory<cuda> is this stand-in (callers check require_memory_compiler first, so the
/// one error above is the only one); under nvcc backend/cuda/memory.hpp specialises it.
template <class Backend> struct memory {
  static stream_t resolve(stream_t s) noexcept { return s; }  // the stream work on `s` runs on
  static void* allocate(std::size_t, stream_t) { return nullptr; }
  static void release(void*, stream_t) noexcept {}
  static void zero(void*, std::size_t, stream_t) {}
  static void copy(void*, const void*, std::size_t, stream_t) {}
  static void copy_to_host(void*, const void*, std::size_t, stream_t) {}
};

#if defined(__SANITIZE_ADDRESS__)
#define TEXPR_DETAIL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEXPR_DETAIL_ASAN 1
#endif
#endif
#if defined(TEXPR_DETAIL_ASAN)
#define TEXPR_HOST_CACHE_DEFAULT_MB 0  // ASan must see every free: no reuse of released blocks
#endif
#ifndef TEXPR_HOST_CACHE_DEFAULT_MB
#define TEXPR_HOST_CACHE_DEFAULT_MB 256
#endif
/// The most TEXPR_HOST_CACHE_MB may ask for (16 GiB): a larger value is capped, so no setting keeps an unbounded
/// amount of freed memory.
#define TEXPR_HOST_CACHE_MAX_MB 16384
// Huge pages for big host blocks: on Linux, outside ASan (whose checks need its own allocator's blocks).
// TEXPR_HOST_HUGE_PAGES=0 at run time turns them off.
#if defined(__linux__) && defined(MADV_HUGEPAGE) && !defined(TEXPR_DETAIL_ASAN)
#define TEXPR_DETAIL_HUGE_PAGES 1
#endif

/// Raw host blocks. Blocks of 2 MiB or more are mapped on a 2 MiB boundary and advised for transparent huge
/// pages: with 4 KiB pages a streaming pass over a big tensor pays a TLB miss every 4 KiB and a fault per page on
/// first touch. NumPy and PyTorch ask for huge pages the same way, and Linux's default THP mode ("madvise") gives
/// them only to memory that asks. Measured on Zen 4: mean(x, 1) over 4096^2 floats 3.2 -> 2.0 ms.
struct host_pages {
  static constexpr std::size_t huge = std::size_t(2) << 20;
  static constexpr std::size_t page = 4096;

  /// Whether blocks of `bytes` are mapped for huge pages (TEXPR_HOST_HUGE_PAGES=0 says never).
  static bool use_huge(std::size_t bytes) noexcept {
#if defined(TEXPR_DETAIL_HUGE_PAGES)
    static const bool on = env_number("TEXPR_HOST_HUGE_PAGES", 0, 1, env_above::ignore).value_or(1) == 1;
    return on && bytes >= huge;
#else
    (void)bytes;
    return false;
#endif
  }

  /// A block of `bytes` aligned to `alignment` (at most a page) or, for huge blocks, to 2 MiB.
  static void* allocate(std::size_t bytes, std::size_t alignment) {
#if defined(TEXPR_DETAIL_HUGE_PAGES)
    if (use_huge(bytes)) {
      const std::size_t length = round_up(bytes, page);
      // Map 2 MiB more than needed, then unmap the unaligned head and the tail.
      void* raw = ::mmap(nullptr, length + huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
      if (raw == MAP_FAILED) throw std::bad_alloc();
      const auto base = reinterpret_cast<std::uintptr_t>(raw);
      const std::uintptr_t start = (base + huge - 1) & ~(std::uintptr_t(huge) - 1);
      if (start != base) ::munmap(raw, start - base);
      const std::uintptr_t end = base + length + huge;
      if (end != start + length) ::munmap(reinterpret_cast<void*>(start + length), end - (start + length));
      ::madvise(reinterpret_cast<void*>(start), length, MADV_HUGEPAGE);  // advice only: failure leaves 4 KiB pages
      return reinterpret_cast<void*>(start);
    }
#endif
    return ::operator new(bytes, std::align_val_t{alignment});
  }

  /// Frees a block from allocate(bytes, alignment).
  static void release(void* p, std::size_t bytes, std::size_t alignment) noexcept {
#if defined(TEXPR_DETAIL_HUGE_PAGES)
    if (use_huge(bytes)) {
      ::munmap(p, round_up(bytes, page));
      return;
    }
#else
    (void)bytes;
#endif
    ::operator delete(p, std::align_val_t{alignment});
  }

 private:
  static constexpr std::size_t round_up(std::size_t n, std::size_t to) noexcept { return (n + to - 1) / to * to; }
};

/// Released host blocks, kept for reuse by size class. A training step allocates the same temporaries every
/// iteration; without reuse each big one is a fresh mmap whose pages fault in again (a quarter of the host SGD
/// step's time), and small ones go back to malloc, so a step could never be allocation-free. Bounded by
/// TEXPR_HOST_CACHE_MB (default 256, at most TEXPR_HOST_CACHE_MAX_MB; 0 disables); tx::release_host_cache() empties
/// it.
class host_block_cache {
 public:
  static constexpr std::size_t alignment = 64;
  /// Below this, classes are powers of two; from it up, eighths of a power of two.
  static constexpr std::size_t min_bytes = std::size_t(1) << 16;

  static host_block_cache& instance() {
    static host_block_cache* cache = new host_block_cache;  // never destroyed: static tensors release into it at exit
    return *cache;
  }
  host_block_cache(const host_block_cache&) = delete;
  host_block_cache& operator=(const host_block_cache&) = delete;

  /// Bytes actually reserved for a request: powers of two (at least 128) below min_bytes, then size classes of
  /// 1/8 of a power of two.
  static std::size_t size_class(std::size_t bytes) {
    if (bytes < min_bytes) {
      std::size_t p = 128;
      while (p < bytes) p *= 2;
      return p;
    }
    std::size_t p = min_bytes;
    while (p * 2 <= bytes) p *= 2;
    const std::size_t step = p / 8;
    return (bytes + step - 1) / step * step;
  }

  /// A block of at least `bytes` (a class size from size_class), from the cache when one is free. `fresh` tells
  /// whether it came from the system allocator (what tx::kernel_log counts).
  void* take(std::size_t bytes, bool& fresh) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      for (std::size_t i = 0; i != free_.size(); ++i)
        if (free_[i].bytes == bytes) {
          void* p = free_[i].p;
          cached_ -= bytes;
          free_[i] = free_.back();
          free_.pop_back();
          fresh = false;
          return p;
        }
    }
    fresh = true;
    return host_pages::allocate(bytes, alignment);
  }

  /// Returns a block taken with `bytes`; kept while the cache has room, else freed.
  void give(void* p, std::size_t bytes) noexcept {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (cached_ + bytes <= limit_ && free_.size() < max_blocks) {
        try {
          free_.push_back({p, bytes});
          cached_ += bytes;
          return;
        } catch (...) {  // no room to record it: free it below
        }
      }
    }
    host_pages::release(p, bytes, alignment);
  }

  /// Frees cached blocks until at most `keep` bytes remain; returns the bytes freed.
  std::size_t trim(std::size_t keep) noexcept {
    std::lock_guard<std::mutex> lock(mutex_);
    const std::size_t before = cached_;
    while (cached_ > keep && !free_.empty()) {
      host_pages::release(free_.back().p, free_.back().bytes, alignment);
      cached_ -= free_.back().bytes;
      free_.pop_back();
    }
    return before - cached_;
  }

  /// The most bytes the cache keeps (TEXPR_HOST_CACHE_MB).
  std::size_t limit() const noexcept { return limit_; }

  /// Bytes held by the cache now.
  std::size_t cached_bytes() {
    std::lock_guard<std::mutex> lock(mutex_);
    return cached_;
  }

  /// Whether released blocks are kept at all (not under ASan, nor with TEXPR_HOST_CACHE_MB=0).
  bool enabled() const noexcept { return limit_ != 0; }

 private:
  static constexpr std::size_t max_blocks = 1024;  // a search over this many is still well under a microsecond
  host_block_cache() {
    static_assert(TEXPR_HOST_CACHE_DEFAULT_MB <= TEXPR_HOST_CACHE_MAX_MB, "texpr: TEXPR_HOST_CACHE_DEFAULT_MB is above TEXPR_HOST_CACHE_MAX_MB");
    const std::uint64_t mb = env_number("TEXPR_HOST_CACHE_MB", 0, TEXPR_HOST_CACHE_MAX_MB).value_or(TEXPR_HOST_CACHE_DEFAULT_MB);
    limit_ = static_cast<std::size_t>(mb) << 20;
  }
  struct block {
    void* p;
    std::size_t bytes;
  };
  std::mutex mutex_;
  std::vector<block> free_;
  std::size_t cached_ = 0, limit_ = 0;
};

template <> struct memory<host> {
  static constexpr std::size_t alignment = host_block_cache::alignment;  // a cache line; full vectors load aligned
  /// Host work has no stream.
  static stream_t resolve(stream_t s) noexcept { return s; }
  /// Number of host buffers allocated so far (tests use it to prove fusion allocates no temporaries).
  static inline std::atomic<std::size_t> allocations{0};
  // Every block carries its class size in a header of one alignment unit before the data, so that release (which
  // is not told the size) can return it to the cache.
  static void* allocate(std::size_t bytes, stream_t) {
    if (bytes == 0) return nullptr;
    allocations.fetch_add(1, std::memory_order_relaxed);
    const std::size_t total = host_block_cache::size_class(bytes + alignment);
    bool fresh = false;
    auto* p = static_cast<unsigned char*>(host_block_cache::instance().take(total, fresh));
    if (fresh) kernel_log::record_allocation(total);
    kernel_log::record_hold(total, false);
    std::memcpy(p, &total, sizeof total);
    return p + alignment;
  }
  static void release(void* ptr, stream_t) noexcept {
    if (!ptr) return;
    auto* p = static_cast<unsigned char*>(ptr) - alignment;
    std::size_t total = 0;
    std::memcpy(&total, p, sizeof total);
    kernel_log::record_give_back(total, false);
    host_block_cache::instance().give(p, total);
  }
  static void zero(void* p, std::size_t bytes, stream_t) {
    if (bytes) std::memset(p, 0, bytes);
  }
  static void copy(void* dst, const void* src, std::size_t bytes, stream_t) {
    if (bytes) std::memcpy(dst, src, bytes);
  }
  static void copy_to_host(void* dst, const void* src, std::size_t bytes, stream_t) {
    if (bytes) std::memcpy(dst, src, bytes);
  }
};

} // namespace texpr::detail

namespace texpr {

/// Returns every freed host block the reuse cache holds to the system (a long-lived process after a phase with
/// big temporaries); returns the bytes released. Later allocations refill the cache up to TEXPR_HOST_CACHE_MB.
inline std::size_t release_host_cache() noexcept { return detail::host_block_cache::instance().trim(0); }

/// Bytes of freed host blocks the reuse cache holds now.
inline std::size_t host_cache_bytes() { return detail::host_block_cache::instance().cached_bytes(); }

} // namespace texpr
